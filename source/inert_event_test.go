package source

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source/inert"
)

const hostile = "\x1b]0;PWNED\x07\x1b[31m\u009b2J"

// hostileEvent fills every string an event can carry with escape sequences.
func hostileEvent() Event {
	s := &Sample{
		Info:   Info{ServerName: hostile, Version: hostile, Role: hostile, RDBLastStatus: hostile, AOFLastStatus: hostile},
		Config: SaveConfig{Method: hostile, Err: hostile, SaveSchedule: Some(hostile)},
		Proc:   ProcMem{Cgroup: hostile},
		Save:   &SaveProgress{Kind: SaveKind(hostile), Trigger: Trigger{Kind: TriggerReplica, Detail: "replica " + hostile}},
	}
	s.Info.Replicas[0] = Replica{IP: hostile, State: hostile}
	return Event{
		Node: NodeID("id" + hostile), Kind: EventSample, Err: hostile, Sample: s,
		Identity: &Identity{Addr: hostile, Version: hostile},
		Command:  &CommandResult{Command: "BGSAVE", Err: hostile, Reply: hostile},
		Report:   &SaveReport{Node: "n", Addr: hostile, Status: hostile, Curve: []CurvePoint{{}}},
		Topology: &Topology{Via: hostile, From: hostile, Err: hostile,
			Shards:  []Shard{{Nodes: []TopologyNode{{ID: NodeID("id" + hostile), Addr: hostile, Hostname: hostile}}}},
			Changes: []TopologyChange{{Addr: hostile, From: hostile, To: hostile}}},
	}
}

// strs calls f on every string inside v, with its path, except NodeIDs.
func strs(v reflect.Value, path string, f func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		if v.Type() != reflect.TypeFor[NodeID]() {
			f(path, v.String())
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			strs(v.Elem(), path, f)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				strs(v.Field(i), path+"."+v.Type().Field(i).Name, f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			strs(v.Index(i), path+"[]", f)
		}
	}
}

func TestInertEvent(t *testing.T) {
	ev := hostileEvent()
	got := Inert(ev)
	n := 0
	strs(reflect.ValueOf(got), "ev", func(path, s string) {
		n++
		if !inert.Clean(s) {
			t.Errorf("%s = %q left raw", path, s)
		}
	})
	if n < 20 {
		t.Fatalf("only %d strings checked", n)
	}
	if got.Node != ev.Node || got.Topology.Shards[0].Nodes[0].ID != ev.Node {
		t.Errorf("a node id changed: %q", got.Node)
	}
	// The caller's event, which a recorder may be writing, keeps the
	// server's exact text.
	strs(reflect.ValueOf(ev), "ev", func(path, s string) {
		if s != "" && !strings.Contains(s, hostile) && s != "BGSAVE" && s != string(TriggerReplica) {
			t.Errorf("original %s changed to %q", path, s)
		}
	})
}

func TestInertCleanEventUnchanged(t *testing.T) {
	ev := Event{Node: "a:1", Kind: EventSample, Sample: &Sample{Info: Info{Version: "7.0.15", Role: "master"}}}
	got := Inert(ev)
	if got.Sample != ev.Sample {
		t.Error("a clean event was copied")
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
		_ = Inert(ev)
	}
}
