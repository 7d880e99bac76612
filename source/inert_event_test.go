package source

import (
	"reflect"
	"testing"

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
	raw, seen := inerttest.Raw(got, "ev", reflect.TypeFor[NodeID]())
	for _, p := range raw {
		t.Errorf("%s left raw", p)
	}
	if seen < 50 {
		t.Fatalf("only %d strings checked", seen)
	}
	if got.Node != ev.Node || got.Topology.Shards[0].Nodes[0].ID != ev.Node || got.Report.Node != ev.Node {
		t.Errorf("a node id changed: %q", got.Node)
	}
	inerttest.Strings(ev, "ev", func(path, s string) {
		if s != inerttest.Hostile {
			t.Errorf("original %s changed to %q", path, s)
		}
	})
}

func TestInertCleanEventUnchanged(t *testing.T) {
	ev := Event{Node: "a:1", Kind: EventSample, Sample: &Sample{Info: Info{Version: "7.0.15", Role: "master"}},
		Topology: &Topology{Shards: []Shard{{Nodes: []TopologyNode{{Addr: "10.0.0.7:6379"}}}}}}
	if got := ev.Inert(); !reflect.DeepEqual(got, ev) {
		t.Errorf("a clean event changed:\n%+v\n%+v", got, ev)
	}
}

func BenchmarkInertSample(b *testing.B) {
	s := &Sample{Info: Info{Version: "7.0.15", Role: "master", RDBLastStatus: "ok", AOFLastStatus: "ok", NumReplicas: 1},
		Config: SaveConfig{Method: "fork", SaveSchedule: Some("3600 1 300 100")}, Proc: ProcMem{Cgroup: "v2:/user.slice"},
		COWFrom: FromProc, FootprintFrom: FromProc}
	s.Info.Replicas[0] = Replica{IP: "10.0.0.7", State: "online"}
	ev := Event{Node: "a:1", Kind: EventSample, Sample: s}
	b.ReportAllocs()
	for b.Loop() {
		_ = ev.Inert()
	}
}
