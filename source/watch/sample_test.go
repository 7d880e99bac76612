package watch

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/probe"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

// TestSampleWaitOnGrid: the sampler's next wake-up is the next point of its
// grid (multiples of the interval, shifted by half the greatest common
// divisor of the two intervals), strictly after now and at most one
// interval away, the same for every sampler of the process with the same
// intervals.
func TestSampleWaitOnGrid(t *testing.T) {
	const iv, ping = 200 * time.Millisecond, 2 * time.Millisecond
	phase := int64(ping / 2) // gcd(200 ms, 2 ms) / 2
	for _, now := range []int64{0, 1, phase - 1, phase, phase + 1, int64(iv) + phase, 7*int64(iv) + 12345, 1e12 + 3} {
		d := sampleWait(now, iv, ping, 0)
		at := now + int64(d)
		if d <= 0 || d > iv {
			t.Errorf("now %d: wait %v, want in (0, %v]", now, d, iv)
		}
		if (at-phase)%int64(iv) != 0 {
			t.Errorf("now %d: wakes at %d, off the grid (%d + k*%d)", now, at, phase, int64(iv))
		}
		if now >= phase && (at-phase)/int64(iv) != (now-phase)/int64(iv)+1 {
			t.Errorf("now %d: wakes at %d, not the first grid point after now", now, at)
		}
	}
	if d := sampleWait(5, iv, 0, 0); d != iv-5 {
		t.Errorf("no probe: wait %v, want %v", d, iv-5)
	}
}

// TestSamplesMissThePINGs: for the defaults, a fleet's budgets and odd
// intervals, 1,000 samples in a row each stay at least half the greatest
// common divisor of the intervals from every PING of the probe's grid.
func TestSamplesMissThePINGs(t *testing.T) {
	for _, c := range []struct {
		iv, ping time.Duration
		apart    time.Duration
	}{
		{200 * time.Millisecond, 2 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 6 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 16 * time.Millisecond, 4 * time.Millisecond},
		{200 * time.Millisecond, 7 * time.Millisecond, 500 * time.Microsecond},
		{300 * time.Millisecond, 200 * time.Millisecond, 50 * time.Millisecond},
		{10 * time.Millisecond, 1500 * time.Microsecond, 250 * time.Microsecond},
	} {
		for _, spread := range []uint32{0, 1, 0xffffffff, probe.Spread("127.0.0.1:6379"), probe.Spread("10.0.0.7:7001")} {
			pings := probe.Phase(spread, c.ping) // the node's own PING grid
			now := int64(12345)
			for range 1000 {
				now += int64(sampleWait(now, c.iv, c.ping, spread))
				off := ((now-pings)%int64(c.ping) + int64(c.ping)) % int64(c.ping)
				dist := min(off, int64(c.ping)-off)
				if dist < int64(c.apart) {
					t.Fatalf("interval %v, PING every %v, spread %#x: a sample at %d is %v from a PING, want at least %v",
						c.iv, c.ping, spread, now, time.Duration(dist), c.apart)
				}
			}
		}
	}
}

// TestFleetSamplesSpread: a thousand nodes sampled every 5 s and PINGed
// every second (the budgets at 1,000 nodes) are sampled at hundreds of
// instants of the 5 s, a few at a time, not all at once; at the same
// intervals and the same place, together.
func TestFleetSamplesSpread(t *testing.T) {
	const nodes, iv, ping = 1000, 5 * time.Second, time.Second
	at := map[int64]int{}
	for i := range nodes {
		spread := probe.Spread("10.0.0.1:" + strconv.Itoa(7000+i))
		at[(int64(sampleWait(0, iv, ping, spread)))%int64(iv)]++
	}
	most := 0
	for _, n := range at {
		most = max(most, n)
	}
	if len(at) < 200 || most > 15 {
		t.Errorf("%d nodes sampled at %d instants of %v, at most %d at once; want 200 or more, 15 at most", nodes, len(at), iv, most)
	}
	t.Logf("%d nodes sampled at %d instants of %v, at most %d at once", nodes, len(at), iv, most)
	s := probe.Spread("10.0.0.1:7000")
	if a, b := sampleWait(123456789, iv, ping, s), sampleWait(123456789, iv, ping, s); a != b {
		t.Errorf("the same node's wait %v, then %v", a, b)
	}
}

// TestSetPingIntervalLive changes a running watcher's PING interval, both
// ways, on a real server: the samples after say the new interval and hold
// as many PINGs as it gives, without a reconnect.
func TestSetPingIntervalLive(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	ep := sourcetest.Endpoint(t, srv.Addr)
	w := New(ep.Node(), ep, nil, Config{Interval: 200 * time.Millisecond, PingInterval: 100 * time.Millisecond})
	defer w.Close()
	var (
		mu       sync.Mutex
		samples  []source.Sample
		connects int
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() {
		w.Run(ctx, func(ev source.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Kind {
			case source.EventSample:
				samples = append(samples, *ev.Sample)
			case source.EventConnected:
				connects++
			}
		})
	})
	// waitFor waits for a sample, after the n-th, whose PINGs were all
	// taken at interval iv and number at least least.
	waitFor := func(n int, iv time.Duration, least int64) int {
		var at int
		servertest.WaitFor(t, 20*time.Second, "a sample with PINGs "+iv.String()+" apart", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for i := n; i < len(samples); i++ {
				if samples[i].Ping.Interval == iv && samples[i].Ping.Count >= least {
					at = i
					return true
				}
			}
			return false
		})
		return at
	}
	// At 100 ms a 200 ms sample holds 2 or 3 PINGs.
	i := waitFor(0, 100*time.Millisecond, 1)
	mu.Lock()
	if c := samples[i].Ping.Count; c > 4 {
		t.Errorf("at 100 ms a sample holds %d PINGs", c)
	}
	mu.Unlock()
	w.SetPingInterval(2 * time.Millisecond)
	// At 2 ms it holds about 100; 40 is far above what 100 ms could give.
	i = waitFor(i+1, 2*time.Millisecond, 40)
	w.SetPingInterval(100 * time.Millisecond)
	// Two samples later the window is past the change: back to a few.
	servertest.WaitFor(t, 20*time.Second, "samples at 100 ms again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for j := i + 2; j < len(samples); j++ {
			s := samples[j]
			if s.Ping.Interval == 100*time.Millisecond && s.Ping.Count >= 1 && s.Ping.Count <= 4 && samples[j-1].Ping.Interval == 100*time.Millisecond {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	if connects != 1 {
		t.Errorf("%d connects: changing the interval must not reconnect", connects)
	}
	if got := w.PingInterval(); got != 100*time.Millisecond {
		t.Errorf("PingInterval() %s, want 100ms", got)
	}
}

// TestSetIntervalLive changes a running watcher's INFO sampling interval,
// both ways, on a real server: coarser, the samples come about a second
// apart; finer, the next one comes at once rather than at the coarse
// interval's next tick, and the ones after it close together. Neither
// change reconnects.
func TestSetIntervalLive(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	const fine, coarse = 50 * time.Millisecond, time.Second
	x := startWatch(t, srv.Addr, Config{Interval: fine})
	// sampleAfter is the offset of the next sample answered after off.
	sampleAfter := func(off time.Duration, what string) time.Duration {
		t.Helper()
		return x.next(t, 10*time.Second, what, func(ev source.Event) bool {
			return ev.Kind == source.EventSample && ev.Offset > off
		}).Offset
	}
	prev := sampleAfter(0, "a first sample")
	for range 3 {
		prev = sampleAfter(prev, "a sample at the fine interval")
	}

	x.w.SetInterval(coarse)
	if got := x.w.Interval(); got != coarse {
		t.Fatalf("Interval() %s after SetInterval(%s)", got, coarse)
	}
	// A sample in flight, and the first on the coarse grid, may come
	// sooner; the three after it are a second apart (20 of the fine
	// interval: a loaded machine delays a sample, it does not bring
	// twenty in a second).
	prev = sampleAfter(x.clock.Offset()+2*fine, "the first sample on the coarse grid")
	for range 3 {
		at := sampleAfter(prev, "a sample at the coarse interval")
		if at-prev < coarse*7/10 {
			t.Errorf("samples %s apart at an interval of %s", at-prev, coarse)
		}
		prev = at
	}

	// Just after a sample, the coarse grid's next tick is a second away:
	// the fine interval must not wait for it.
	changed := x.clock.Offset()
	x.w.SetInterval(fine)
	first := sampleAfter(changed, "the first sample at the fine interval")
	if first-changed >= coarse/2 {
		t.Errorf("the first sample after SetInterval(%s) came %s after it, %s after the last: it waited for the coarse tick",
			fine, first-changed, first-prev)
	}
	fast, gaps := 0, []time.Duration{}
	prev = first
	for range 10 {
		at := sampleAfter(prev, "a sample at the fine interval")
		gaps = append(gaps, at-prev)
		if at-prev < coarse/2 {
			fast++
		}
		prev = at
	}
	if fast < 8 {
		t.Errorf("only %d of 10 samples came less than %s apart at an interval of %s: %v", fast, coarse/2, fine, gaps)
	}
	if n := x.count(source.EventConnected); n != 1 {
		t.Errorf("%d connects: changing the interval must not reconnect", n)
	}
}
