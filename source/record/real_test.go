package record

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/cluster"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// liveRecording records what emit is handed, keeping each event as it
// was emitted, and reads the recording back once closed.
type liveRecording struct {
	mu   sync.Mutex
	buf  syncBuffer
	w    *Writer
	live []source.Event
}

func newLiveRecording(t *testing.T, h Header) *liveRecording {
	r := &liveRecording{}
	w, err := NewWriter(&r.buf, h, Options{Compression: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	r.w = w
	return r
}

func (r *liveRecording) emit(ev source.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(ev)
	r.live = append(r.live, ev)
}

// check closes the recording and compares it, read back, with what was
// emitted: events, derived figures and reports alike.
func (r *liveRecording) check(t *testing.T) *Recording {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.w.Close(); err != nil {
		t.Fatal(err)
	}
	rec := readComplete(t, r.buf.bytes())
	if d := eventsDiffer(r.live, rec.Events); d != "" {
		t.Fatal(d)
	}
	var reports []source.SaveReport
	for _, ev := range rec.Events {
		if ev.Kind == source.EventSaveEnded {
			reports = append(reports, *ev.Report)
		}
	}
	if d := reportsDiffer(reports, rec.Derived); d != "" {
		t.Fatalf("reports derived from the recording differ from the live ones: %s", d)
	}
	return rec
}

// TestRecordLiveAOFRewrite: a real AOF rewrite (its RDB preamble stretched
// by rdb-key-save-delay) recorded and read back as it was emitted.
func TestRecordLiveAOFRewrite(t *testing.T) {
	s := servertest.Start(t, server.Options{Args: []string{"--appendonly", "yes", "--rdb-key-save-delay", "50"}})
	servertest.Populate(t, servertest.Client(t, s), 20000, "key", 100)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, clock, id := watchtest.Connect(t, ctx, s.Addr, watch.Config{Interval: 100 * time.Millisecond, PingInterval: 5 * time.Millisecond})
	r := newLiveRecording(t, Header{VKWatch: "test", Epoch: clock.Epoch(), Servers: []ServerInfo{{Node: w.Node(), Addr: s.Addr, Identity: &id}}})
	rep := watchtest.RunSave(t, ctx, w, 30*time.Second, r.emit, "BGREWRITEAOF")
	r.check(t)
	if rep.Kind != source.SaveAOF || rep.Trigger.Kind != source.TriggerUser || len(rep.Curve) == 0 {
		t.Errorf("report %+v", rep)
	}
}

// TestRecordLiveClusterFailover: a fleet of a real cluster recorded through
// a CLUSTER FAILOVER, read back as it was emitted: its topology events
// with the swapped roles, every node's samples.
func TestRecordLiveClusterFailover(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	clock := source.NewClock()
	f := fleet.NewCluster(sourcetest.Endpoint(t, c.Nodes()[0].Addr), fleet.Config{
		Clock:     clock,
		Watch:     watch.Config{Interval: 100 * time.Millisecond},
		Discovery: cluster.Config{Every: time.Second},
	})
	if _, err := f.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.Connect(context.Background())
	r := newLiveRecording(t, Header{VKWatch: "test", Epoch: clock.Epoch()})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f.Run(ctx, r.emit) })
	defer f.Close()
	primary := c.Primaries()[0]
	rep := c.ReplicasOf(primary)[0]
	swapped := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i := len(r.live) - 1; i >= 0; i-- {
			if top := r.live[i].Topology; top != nil {
				n, _ := top.Node(source.NodeID(rep.ID))
				return n.Role == source.RolePrimary
			}
		}
		return false
	}
	servertest.WaitFor(t, 10*time.Second, "a first topology", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.live) > 20 })
	if err := c.Client(rep).Do(context.Background(), "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, 10*time.Second, "the swapped roles recorded", swapped)
	cancel()
	wg.Wait()
	rec := r.check(t)
	nodes := map[source.NodeID]bool{}
	for _, ev := range rec.Events {
		if ev.Kind == source.EventSample {
			nodes[ev.Node] = true
		}
	}
	if len(nodes) != 6 {
		t.Errorf("samples of %d nodes, want 6", len(nodes))
	}
}
