package source

import (
	"reflect"
	"testing"

	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/inert/inerttest"
)

// TestInertReachesEveryString: every string an event can carry, filled
// by reflection, comes out of Event.Inert clean, node ids excepted (they
// are keys, kept as given), and the event it was given keeps the
// server's exact text (a recorder may be writing it).
func TestInertReachesEveryString(t *testing.T) {
	var ev Event
	inerttest.Fill(&ev)
	got := ev.Inert()
	inerttest.Check(t, ev, got, "ev", 50, reflect.TypeFor[NodeID]())
	if got.Node != ev.Node || got.Topology.Shards[0].Nodes[0].ID != ev.Node || got.Report.Node != ev.Node {
		t.Errorf("a node id changed: %q", got.Node)
	}
}

func TestInertCleanEventUnchanged(t *testing.T) {
	ev := Event{Node: "a:1", Kind: EventSample, Sample: &Sample{Info: Info{Version: "7.0.15", Role: "master"}},
		Topology: &Topology{Shards: []Shard{{Nodes: []TopologyNode{{Addr: "10.0.0.7:6379"}}}}}}
	if got := ev.Inert(); !reflect.DeepEqual(got, ev) {
		t.Errorf("a clean event changed:\n%+v\n%+v", got, ev)
	}
}

// cleanSample is a sample as a healthy server gives it, with a save
// running when saving is true.
func cleanSample(saving bool) *Sample {
	s := &Sample{Info: Info{Version: "7.0.15", Role: "master", RDBLastStatus: "ok", AOFLastStatus: "ok", NumReplicas: 1},
		Config: SaveConfig{Method: "fork", SaveSchedule: Some("3600 1 300 100")}, Proc: ProcMem{Cgroup: "v2:/user.slice"},
		COWFrom: FromProc, FootprintFrom: FromProc}
	s.Info.Replicas[0] = Replica{IP: "10.0.0.7", State: "online"}
	if saving {
		s.Save = &SaveProgress{Kind: SaveKind("BGSAVE fork"), Phase: PhaseStarting,
			Trigger: Trigger{Kind: TriggerReplica, Detail: "replica 10.0.0.7:6380"}}
	}
	return s
}

// TestInertCleanSampleNotCopied: the event of every sample keeps its
// sample, and the save progress in it, when there is nothing to escape
// (one copy a sample is what the UI would pay on every event of a save).
func TestInertCleanSampleNotCopied(t *testing.T) {
	for _, saving := range []bool{false, true} {
		ev := Event{Node: "a:1", Kind: EventSample, Sample: cleanSample(saving)}
		got := ev.Inert()
		if got.Sample != ev.Sample {
			t.Errorf("saving %v: a clean sample was copied", saving)
		}
	}
}

// TestInertSaveOnlyHostile: a sample whose only raw text is its save's
// trigger is copied, with its save, and the caller's keep the raw text.
func TestInertSaveOnlyHostile(t *testing.T) {
	ev := Event{Node: "a:1", Kind: EventSample, Sample: cleanSample(true)}
	ev.Sample.Save.Trigger.Detail = "replica " + inerttest.Hostile
	orig := ev.Sample.Save
	got := ev.Inert()
	if got.Sample == ev.Sample || got.Sample.Save == orig {
		t.Fatal("a sample with a raw save trigger was not copied")
	}
	if d := got.Sample.Save.Trigger.Detail; !inert.Clean(d) {
		t.Errorf("trigger detail left raw: %q", d)
	}
	if ev.Sample.Save != orig || orig.Trigger.Detail != "replica "+inerttest.Hostile {
		t.Errorf("the caller's save changed: %q", orig.Trigger.Detail)
	}
	if got.Sample.Save.Kind != orig.Kind || got.Sample.Save.Phase != orig.Phase {
		t.Errorf("clean save fields changed: %+v", got.Sample.Save)
	}
}

func BenchmarkInertSample(b *testing.B) { benchInertSample(b, false) }

// BenchmarkInertSampleSaving: the event of every sample while a save runs.
func BenchmarkInertSampleSaving(b *testing.B) { benchInertSample(b, true) }

func benchInertSample(b *testing.B, saving bool) {
	ev := Event{Node: "a:1", Kind: EventSample, Sample: cleanSample(saving)}
	b.ReportAllocs()
	for b.Loop() {
		_ = ev.Inert()
	}
}
