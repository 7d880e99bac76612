package fleet

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/cluster"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// sink keeps every event a fleet emits.
type sink struct {
	mu  sync.Mutex
	evs []source.Event
}

func (s *sink) emit(ev source.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, ev)
	s.mu.Unlock()
}

func (s *sink) events() []source.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]source.Event(nil), s.evs...)
}

// since returns the events after the first n.
func (s *sink) since(n int) []source.Event {
	e := s.events()
	return e[min(n, len(e)):]
}

// lastTopology is the latest EventTopology's payload.
func (s *sink) lastTopology() *source.Topology {
	evs := s.events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == source.EventTopology {
			return evs[i].Topology
		}
	}
	return nil
}

// runFleet runs f until the test ends, its events kept in the sink
// returned.
func runFleet(t *testing.T, f *Fleet) *sink {
	t.Helper()
	s := &sink{}
	runFleetTo(t, f, s.emit)
	return s
}

// runFleetTo runs f until the test ends, its events handed to emit; then
// it stops f, waits for it and closes it.
func runFleetTo(t *testing.T, f *Fleet, emit func(source.Event)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f.Run(ctx, emit) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		f.Close()
	})
}

// sampled reports whether evs hold a sample of node.
func sampled(evs []source.Event, node source.NodeID) bool {
	for _, ev := range evs {
		if ev.Kind == source.EventSample && ev.Node == node {
			return true
		}
	}
	return false
}

// noLeaks checks, after everything the test started has been stopped
// (cleanups run last-in first-out), that no goroutine of it is left.
func noLeaks(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func TestPingInterval(t *testing.T) {
	for _, c := range []struct {
		nodes int
		want  time.Duration
	}{
		{1, 2 * time.Millisecond}, {2, 2 * time.Millisecond}, {3, 3 * time.Millisecond},
		{6, 6 * time.Millisecond}, {100, 100 * time.Millisecond}, {1000, time.Second},
	} {
		if got := PingInterval(c.nodes, 0); got != c.want {
			t.Errorf("PingInterval(%d) = %s, want %s", c.nodes, got, c.want)
		}
		if total := float64(c.nodes) * float64(time.Second) / float64(PingInterval(c.nodes, 0)); c.nodes > 2 && total > DefaultPingBudget+1e-6 {
			t.Errorf("%d nodes PING %.0f times a second, over the budget", c.nodes, total)
		}
	}
	if got := PingInterval(10, 100); got != 100*time.Millisecond {
		t.Errorf("PingInterval(10, budget 100) = %s, want 100ms", got)
	}
}

// A fleet grown past the budget starts the watchers that PING too often
// again at the new interval; one within the slack is left alone, and so
// is everything when --ping-interval was given.
func TestOverBudget(t *testing.T) {
	mk := func(explicit time.Duration, intervals ...time.Duration) *Fleet {
		f := newFleet(Config{Watch: watch.Config{PingInterval: explicit}})
		for i, d := range intervals {
			f.watchers[source.NodeID(rune('a'+i))] = &running{interval: d}
		}
		f.topo.PingInterval = f.intervalFor(len(intervals))
		return f
	}
	ms := time.Millisecond
	// 3 nodes at 3 ms joined by 3 at 6 ms: 1,500 PINGs/s > 1,250.
	f := mk(0, 3*ms, 3*ms, 3*ms, 6*ms, 6*ms, 6*ms)
	if got := f.overBudgetLocked(); len(got) != 3 || len(f.watchers) != 3 {
		t.Errorf("over budget: restarted %d, kept %d; want 3 and 3", len(got), len(f.watchers))
	}
	// 6 at 6 ms joined by one at 7 ms: 1,143/s, within the slack.
	f = mk(0, 6*ms, 6*ms, 6*ms, 6*ms, 6*ms, 6*ms, 7*ms)
	if got := f.overBudgetLocked(); len(got) != 0 {
		t.Errorf("within the slack: restarted %d", len(got))
	}
	f = mk(time.Millisecond, ms, ms, ms, ms, ms, ms)
	if got := f.overBudgetLocked(); len(got) != 0 || f.topo.PingInterval != ms {
		t.Errorf("--ping-interval 1ms: restarted %d, interval %s", len(got), f.topo.PingInterval)
	}
}

// TestFleetFollowsCluster: a fleet from one seed watches all six nodes of a
// real cluster under their cluster ids at the budget's interval; a
// CLUSTER FAILOVER shows as swapped roles within 5 s, a killed node shows
// as down while the rest go on, and a node added later is watched.
func TestFleetFollowsCluster(t *testing.T) {
	noLeaks(t)
	c := servertest.StartCluster(t, 3, 1)
	c.Fill(300, 100)
	f := NewCluster(sourcetest.Endpoint(t, c.Nodes()[0].Addr), Config{
		Watch:     watch.Config{Interval: 100 * time.Millisecond},
		Discovery: cluster.Config{Every: time.Second},
	})
	top, err := f.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(top.Nodes()); n != 6 || top.PingInterval != 6*time.Millisecond || f.PingInterval() != 6*time.Millisecond {
		t.Fatalf("%d nodes at %s, want 6 at 6ms", n, top.PingInterval)
	}
	for _, r := range f.Connect(context.Background()) {
		if r.Err != nil || !r.Identity.Cluster || c.Node(string(r.Member.ID)).Addr != r.Identity.Addr {
			t.Errorf("connect %s: %+v, %v", r.Member.ID, r.Identity, r.Err)
		}
	}
	s := runFleet(t, f)
	servertest.WaitFor(t, 10*time.Second, "samples of all six nodes", func() bool {
		evs := s.events()
		for _, n := range c.Nodes() {
			if !sampled(evs, source.NodeID(n.ID)) {
				return false
			}
		}
		return true
	})
	if first := s.events()[0]; first.Kind != source.EventTopology || first.Node != "" || len(first.Topology.Nodes()) != 6 {
		t.Errorf("first event %+v, want the fleet's topology", first)
	}

	// CLUSTER FAILOVER on a replica: the roles swap within 5 s of it.
	primary := c.Primaries()[0]
	rep := c.ReplicasOf(primary)[0]
	sent := time.Now()
	if err := c.Client(rep).Do(context.Background(), "CLUSTER", "FAILOVER").Err(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, 5*time.Second, "the swapped roles in a topology event", func() bool {
		top := s.lastTopology()
		p, _ := top.Node(source.NodeID(rep.ID))
		r, _ := top.Node(source.NodeID(primary.ID))
		return p.Role == source.RolePrimary && r.Role == source.RoleReplica && r.Primary == p.ID
	})
	t.Logf("roles swapped in the fleet's topology %s after CLUSTER FAILOVER", time.Since(sent).Round(time.Millisecond))
	c.WaitOK()

	// A killed node shows as down; every other node goes on sampling.
	dead := c.Replicas()[1]
	c.Kill(dead)
	var downAt int
	servertest.WaitFor(t, 5*time.Second, dead.Addr+" reported down", func() bool {
		for i, ev := range s.events() {
			if ev.Node == source.NodeID(dead.ID) && ev.Kind == source.EventDisconnected && !ev.Stalled {
				downAt = i
				return true
			}
		}
		return false
	})
	servertest.WaitFor(t, 5*time.Second, "the other nodes sampled after that", func() bool {
		evs := s.since(downAt)
		for _, n := range c.Live() {
			if !sampled(evs, source.NodeID(n.ID)) {
				return false
			}
		}
		return true
	})
	servertest.WaitFor(t, 15*time.Second, "the cluster to mark "+dead.Addr+" failed", func() bool {
		n, _ := s.lastTopology().Node(source.NodeID(dead.ID))
		return n.Health == source.HealthFailed
	})

	// A node added later is watched, at the interval for seven.
	added := c.AddNode(c.Primaries()[2])
	servertest.WaitFor(t, 10*time.Second, "a sample of the added node", func() bool {
		return sampled(s.events(), source.NodeID(added.ID))
	})
	// The added node is a replica: its full sync forks a save on its
	// primary, and while that runs attention holds the saver at the fine
	// interval and the topology says the others' coarser one (seen: 12ms
	// at the added node's first sample). Once the sync's save is over the
	// seven share the budget evenly.
	servertest.WaitFor(t, 15*time.Second, "7 nodes at 7ms after the join", func() bool {
		top := s.lastTopology()
		return top.PingInterval == 7*time.Millisecond && len(top.Nodes()) == 7
	})
	if m, ok := f.Member(source.NodeID(added.ID)); !ok || m.Endpoint.Addr != added.Addr {
		t.Errorf("member of the added node: %+v %v", m, ok)
	}
}

// TestFleetOfFiveAddresses: five explicit addresses, each its own node id
// (its address) and shard, PINGed at 5 ms, all sampled; the topology takes
// each server's role from INFO.
func TestFleetOfFiveAddresses(t *testing.T) {
	noLeaks(t)
	var members []Member
	for range 5 {
		srv := servertest.StartDefault(t)
		ep := sourcetest.Endpoint(t, srv.Addr)
		members = append(members, Member{ID: ep.Node(), Endpoint: ep})
	}
	f := NewList(members, Config{Watch: watch.Config{Interval: 100 * time.Millisecond}})
	top, err := f.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Shards) != 5 || top.Cluster || top.PingInterval != 5*time.Millisecond {
		t.Fatalf("topology %+v: want 5 shards of a list at 5ms", top)
	}
	for _, r := range f.Connect(context.Background()) {
		if r.Err != nil || r.Identity.Cluster {
			t.Errorf("%s: %+v %v", r.Member.ID, r.Identity, r.Err)
		}
	}
	s := runFleet(t, f)
	servertest.WaitFor(t, 10*time.Second, "samples of all five", func() bool {
		for _, m := range members {
			if !sampled(s.events(), m.ID) {
				return false
			}
		}
		return true
	})
	for _, n := range s.lastTopology().Nodes() {
		if n.Role != source.RolePrimary || n.IP != "127.0.0.1" || !strings.HasPrefix(string(n.ID), "127.0.0.1:") {
			t.Errorf("node %+v: want a primary on 127.0.0.1 named by its address", n)
		}
	}
	res := f.Do(context.Background(), members[3].ID, "PING")
	if !res.OK() || res.Reply != "PONG" {
		t.Errorf("Do PING: %+v", res)
	}
	if res := f.Do(context.Background(), "nobody", "BGSAVE"); res.OK() {
		t.Errorf("Do to an unknown node: %+v", res)
	}
	// Its refusal is an event too: a roll that sent it is not left
	// waiting for an answer that never comes.
	servertest.WaitFor(t, 5*time.Second, "the refusal to an unknown node as an event", func() bool {
		for _, ev := range s.events() {
			if ev.Node == "nobody" && ev.Kind == source.EventCommand && ev.Command != nil &&
				ev.Command.Command == "BGSAVE" && strings.Contains(ev.Command.Err, "not watched") {
				return true
			}
		}
		return false
	})
}
