package roll

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// TestStatusReadsTheStore feeds the events of a real server, through a
// BGSAVE, the server's death and its restart, to a Status over a store
// its owner feeds (the UI's) and to a Status with a store of its own
// (headless). At every event the two say the same of the node, and the
// first keeps no copy: its sample, report and forecast are the store's.
func TestStatusReadsTheStore(t *testing.T) {
	// 10,000 keys at 100 µs each: a save of about a second, sampled mid-way.
	s := watchtest.SlowSave(t, 10000, 100, 100, 90*time.Second, watch.Config{Interval: 100 * time.Millisecond})
	srv, ctx, w, id := s.Server, s.Ctx, s.Watcher, s.Watcher.Node()
	top := source.Topology{Shards: []source.Shard{{Nodes: []source.TopologyNode{{ID: id, Addr: srv.Addr, IP: "127.0.0.1"}}}}}
	hist := store.New(store.Config{})
	shared, own := NewStatusOf(top, hist), NewStatus(top)

	events := watchtest.Run(t, w, 1024)

	// next feeds events, the store first as the UI does, until cond holds
	// for the status after one of them.
	next := func(what string, cond func(source.Event, NodeStatus) bool) NodeStatus {
		t.Helper()
		for {
			select {
			case ev := <-events:
				hist.Add(ev)
				shared.Observe(ev)
				own.Observe(ev)
				a, okA := shared.Node(id)
				b, okB := own.Node(id)
				if !okA || !okB {
					t.Fatalf("%s: the node is no member (%v %v)", ev.Kind, okA, okB)
				}
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("after %s the two statuses differ:\nover the store: %+v\nown store:      %+v", ev.Kind, a, b)
				}
				v := hist.Live(id)
				if a.Sample != v.Latest || a.Report != v.Report || a.Identity != v.Identity || !reflect.DeepEqual(a.Forecast, v.Forecast) {
					t.Fatalf("after %s the status holds its own copy, not the store's", ev.Kind)
				}
				if cond(ev, a) {
					return a
				}
			case <-ctx.Done():
				t.Fatalf("no %s", what)
			}
		}
	}
	first := next("first sample", func(ev source.Event, n NodeStatus) bool { return ev.Kind == source.EventSample })
	if !first.Connected || first.Identity == nil || !first.Forecast.OK || first.Host == "" {
		t.Fatalf("after the first sample: %+v", first)
	}
	if res := w.Do(ctx, "BGSAVE"); !res.OK() {
		t.Fatalf("BGSAVE: %s", res.Err)
	}
	next("the save seen running", func(_ source.Event, n NodeStatus) bool { return n.Busy() })
	done := next("the save's report", func(ev source.Event, _ NodeStatus) bool { return ev.Kind == source.EventSaveEnded })
	if done.Report == nil || done.Report.Status != "ok" {
		t.Fatalf("report %+v", done.Report)
	}

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := next("the server down", func(ev source.Event, _ NodeStatus) bool { return ev.Kind == source.EventDisconnected })
	if down.Connected || down.Err == "" || down.Stalled || down.Report != done.Report {
		t.Fatalf("after the kill: %+v", down)
	}
	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	up := next("the server back", func(ev source.Event, _ NodeStatus) bool { return ev.Kind == source.EventConnected })
	if !up.Connected || up.Err != "" || up.Identity == first.Identity {
		t.Fatalf("after the restart: %+v", up)
	}
}
