package probe

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// sharedConn waits until p is served by the shared loop and has answered
// at least answered PINGs there, and returns its connection.
func sharedConn(t *testing.T, p *Probe, answered uint64) *loopConn {
	t.Helper()
	var c *loopConn
	servertest.WaitFor(t, 10*time.Second, fmt.Sprintf("the probe on the shared loop, %d PINGs answered", answered), func() bool {
		c = p.shared.Load()
		return c != nil && p.answered.Load() >= answered
	})
	return c
}

func currentLoop() *probeLoop {
	defaultLoop.mu.Lock()
	defer defaultLoop.mu.Unlock()
	return defaultLoop.l
}

// TestProbeLoopStalledServerDelaysNoOther: two servers on the one loop,
// one of them stopped (SIGSTOP). The healthy one's PINGs go on at their
// pace with normal round trips while the stalled one's PING is in flight,
// and the stalled one's PING is answered, and timed, once it resumes.
func TestProbeLoopStalledServerDelaysNoOther(t *testing.T) {
	healthy := servertest.Start(t, server.Options{})
	stalled := servertest.Start(t, server.Options{})
	ph, _ := runProbe(t, endpointOf(t, healthy), 2*time.Millisecond)
	ps, _ := runProbe(t, endpointOf(t, stalled), 2*time.Millisecond)
	if sharedConn(t, ph, 5).l != sharedConn(t, ps, 5).l {
		t.Fatal("the two probes are not on the same loop")
	}
	ph.Summary()
	ps.Summary()

	thaw := servertest.Freeze(t, stalled)
	before := ph.answered.Load()
	var inflight, healthyMax time.Duration
	servertest.WaitFor(t, 20*time.Second, "the stalled server's PING in flight for a second", func() bool {
		iv, _ := ps.Summary()
		h, _ := ph.Summary()
		healthyMax = max(healthyMax, h.Worst())
		inflight = iv.InFlight
		return inflight >= time.Second
	})
	answered := ph.answered.Load() - before
	// PINGs are due every 2 ms: over the stall at least a quarter of them
	// were answered (the machine may be busy), and none of them waited
	// for the stalled server.
	if want := uint64(inflight / (2 * time.Millisecond) / 4); answered < want {
		t.Errorf("healthy server: %d PINGs answered while the other was stalled for %s, want >= %d", answered, inflight, want)
	}
	if healthyMax >= inflight/4 {
		t.Errorf("healthy server's worst PING %s during a %s stall of the other", healthyMax, inflight)
	}
	thawAnswered(t, ps, thaw, "stalled", inflight)
}

// TestProbeLoopAddRemove: probes join and leave the loop while it runs
// (a fleet changes); the others go on, and the loop ends with the last.
func TestProbeLoopAddRemove(t *testing.T) {
	a := servertest.Start(t, server.Options{})
	b := servertest.Start(t, server.Options{})
	pa, stopA := runProbe(t, endpointOf(t, a), 2*time.Millisecond)
	ca := sharedConn(t, pa, 5)
	pb, stopB := runProbe(t, endpointOf(t, b), 2*time.Millisecond)
	if sharedConn(t, pb, 5).l != ca.l {
		t.Fatal("the second probe did not join the running loop")
	}
	stopA()
	if pa.shared.Load() != nil {
		t.Error("a stopped probe still has a connection on the loop")
	}
	n := pb.answered.Load()
	servertest.WaitFor(t, 10*time.Second, "PINGs of the remaining probe", func() bool { return pb.answered.Load() >= n+50 })
	// A third joins, on the same loop.
	pc, stopC := runProbe(t, endpointOf(t, a), 2*time.Millisecond)
	if sharedConn(t, pc, 5).l != ca.l {
		t.Error("a probe started later is not on the running loop")
	}
	stopB()
	stopC()
	if l := currentLoop(); l != nil {
		t.Errorf("the loop is still the default after its last probe left (refs %d)", l.refs)
	}
	// A probe after that starts a new loop.
	pd, _ := runProbe(t, endpointOf(t, b), 2*time.Millisecond)
	if sharedConn(t, pd, 5).l == ca.l {
		t.Error("a probe after the last one left joined the stopped loop")
	}
}

// TestProbeLoopIntervals: each probe keeps its own interval, and dozens of
// connections share the loop.
func TestProbeLoopIntervals(t *testing.T) {
	srvs := []*server.Server{servertest.Start(t, server.Options{}), servertest.Start(t, server.Options{})}
	fast, _ := runProbe(t, endpointOf(t, srvs[0]), 2*time.Millisecond)
	slow, _ := runProbe(t, endpointOf(t, srvs[1]), 6*time.Millisecond)
	var many []*Probe
	for i := range 30 {
		p, _ := runProbe(t, endpointOf(t, srvs[i%2]), 4*time.Millisecond)
		many = append(many, p)
	}
	l := sharedConn(t, fast, 5).l
	for _, p := range append(many, slow) {
		if sharedConn(t, p, 5).l != l {
			t.Fatal("probes on different loops")
		}
	}
	// Each probe is PINGed at most once per point of its own grid, so in a
	// window of d it answers at most d/interval + 2 PINGs (one more for a
	// grid point at each end, one more for the PING in flight when the
	// window opened). A busy machine makes the loop late and skips grid
	// points, the 2 ms probe's most: fewer PINGs is load, not a fault, so
	// only the upper bound says whether each probe keeps its own interval.
	t0 := Now()
	f0, s0 := fast.answered.Load(), slow.answered.Load()
	m0 := make([]uint64, len(many))
	for i, p := range many {
		m0[i] = p.answered.Load()
	}
	servertest.WaitFor(t, 30*time.Second, "600 PINGs of the 2 ms probe", func() bool { return fast.answered.Load() >= f0+600 })
	d := time.Duration(Now() - t0)
	within := func(what string, n uint64, every time.Duration) {
		if most := uint64(d/every) + 2; n > most {
			t.Errorf("%s answered %d PINGs in %s: more than one per %s (at most %d)", what, n, d, every, most)
		}
	}
	within("the 2 ms probe", fast.answered.Load()-f0, 2*time.Millisecond)
	s := slow.answered.Load() - s0
	within("the 6 ms probe", s, 6*time.Millisecond)
	if s < 50 {
		t.Errorf("the 6 ms probe answered only %d PINGs in %s", s, d)
	}
	for i, p := range many {
		within(fmt.Sprintf("probe %d of 30 (4 ms)", i), p.answered.Load()-m0[i], 4*time.Millisecond)
		if p.answered.Load() < 50 {
			t.Errorf("probe %d of 30 answered only %d PINGs", i, p.answered.Load())
		}
		if e := p.err(); e != "" {
			t.Errorf("probe %d: %s", i, e)
		}
	}
}

// TestProbeLoopKernelTimestamps: on TCP the replies carry the kernel's
// receive timestamp, so the loop reads them at the next tick instead of
// waking for each; on a unix socket too, or it keeps waking for them.
// Either way every PING is counted and timed.
func TestProbeLoopKernelTimestamps(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	srv := servertest.Start(t, server.Options{Args: []string{"--unixsocket", sock, "--unixsocketperm", "700"}})
	for _, ep := range []source.Endpoint{endpointOf(t, srv), {Network: "unix", Addr: sock}} {
		p, stop := runProbe(t, ep, 2*time.Millisecond)
		c := sharedConn(t, p, 5)
		p.Summary()
		servertest.WaitFor(t, 10*time.Second, "100 PINGs on "+ep.Network, func() bool { return p.answered.Load() >= 105 })
		iv, _ := p.Summary()
		checkOrdered(t, ep.Network, iv)
		if ep.Network == "tcp" && !c.deferred.Load() {
			t.Error("TCP replies are not timed by the kernel's timestamps")
		}
		t.Logf("%s: kernel timestamps %v, p50 %s", ep.Network, c.deferred.Load(), iv.P50)
		stop()
	}
}

// TestProbeSummarySeesAnswers: a reply that has arrived is counted by the
// next summary and not shown as a PING in flight, although the loop reads
// timestamped replies only at its next tick: the summary asks the loop to
// read first.
func TestProbeSummarySeesAnswers(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	// A PING every 2 s; once replies carry timestamps they wait for the
	// tick that sends the next PING. Which reply is the first with a
	// timestamp is the kernel's to say: while no socket of the host asks
	// for them, Linux turns receive timestamps on a moment after the first
	// one does (net_enable_timestamp defers it to a work queue), and the
	// replies that come meanwhile carry none.
	p, _ := runProbe(t, endpointOf(t, srv), 2*time.Second)
	c := sharedConn(t, p, 1)
	servertest.WaitFor(t, 10*time.Second, "replies with kernel timestamps", c.deferred.Load)
	p.Summary()
	prev := p.answered.Load()
	// Without the summary's request to read, the next answer would be
	// counted only by the tick that sends the PING after it, and so
	// together with that PING in flight. A tick does read it when this
	// goroutine is kept from polling for a whole interval (a busy
	// machine): then the answer after is tried.
	servertest.WaitFor(t, 20*time.Second, "a PING answered and nothing in flight", func() bool {
		iv, _ := p.Summary()
		n := p.answered.Load()
		ok := n == prev+1 && iv.Count > 0 && iv.InFlight == 0
		prev = n
		return ok
	})
}
