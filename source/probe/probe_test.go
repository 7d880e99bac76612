package probe

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// runProbe runs a probe of ep every interval until the returned stop is
// called (or the test ends).
func runProbe(t *testing.T, ep source.Endpoint, interval time.Duration) (*Probe, func()) {
	t.Helper()
	p := New(ep, nil, interval, 3*time.Second, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.Run(ctx)
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return p, stop
}

func endpointOf(t *testing.T, srv *server.Server) source.Endpoint {
	t.Helper()
	ep, err := source.ParseAddress(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// startProbe runs a probe of srv every 2 ms until the returned stop is
// called (or the test ends).
func startProbe(t *testing.T, srv *server.Server) (*Probe, func()) {
	t.Helper()
	return runProbe(t, endpointOf(t, srv), 2*time.Millisecond)
}

// pingCalls reads how many PINGs the server executed.
func pingCalls(t *testing.T, c *redis.Client) uint64 {
	t.Helper()
	text, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_ping:calls="); ok {
			n, _ := strconv.ParseUint(rest[:strings.IndexByte(rest, ',')], 10, 64)
			return n
		}
	}
	return 0
}

func checkOrdered(t *testing.T, what string, l source.Latency) {
	t.Helper()
	if l.Count <= 0 || l.Min <= 0 || l.P50 < l.Min || l.P99 < l.P50 || l.Max < l.P99 {
		t.Errorf("%s: not a sane summary: %+v", what, l)
	}
}

func TestProbeCountsPINGs(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	c := servertest.Client(t, srv)
	p, stop := startProbe(t, srv)

	var sum int64
	var lastRolling source.Latency
	servertest.WaitFor(t, 20*time.Second, "200 PINGs", func() bool {
		iv, roll := p.Summary()
		if iv.Count > 0 {
			checkOrdered(t, "interval", iv)
		}
		sum += iv.Count
		lastRolling = roll
		return p.answered.Load() >= 200
	})
	stop()
	iv, _ := p.Summary()
	sum += iv.Count
	answered := p.answered.Load()

	// The server's own count of PINGs agrees with the probe's (one PING may
	// have been executed while the probe was being stopped).
	calls := pingCalls(t, c)
	if calls < answered || calls > answered+1 {
		t.Errorf("server executed %d PINGs, probe counted %d answered", calls, answered)
	}
	// Every answered PING is in exactly one interval; corrections only add.
	if sum < int64(answered) {
		t.Errorf("intervals hold %d PINGs, fewer than the %d answered", sum, answered)
	}
	checkOrdered(t, "rolling", lastRolling)
	if lastRolling.Max >= time.Second {
		t.Errorf("idle server with a PING of %s", lastRolling.Max)
	}
}

func TestProbeStallRecordsCorrectedLatency(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	c := servertest.Client(t, srv)
	p, _ := startProbe(t, srv)
	servertest.WaitFor(t, 10*time.Second, "first PINGs", func() bool { return p.answered.Load() >= 10 })
	p.Summary()

	// A PING sent just after the sleep began waits up to one probe
	// interval less than the sleep; sleep a little longer than 1 s.
	if err := c.Do(context.Background(), "DEBUG", "SLEEP", "1.05").Err(); err != nil {
		t.Fatal(err)
	}
	var stalled, roll source.Latency
	servertest.WaitFor(t, 10*time.Second, "the stalled PING in a summary", func() bool {
		iv, r := p.Summary()
		if iv.Max >= time.Second {
			stalled, roll = iv, r
			return true
		}
		return false
	})
	if stalled.Max > 5*time.Second {
		t.Errorf("stalled PING took %s for a 1.05 s sleep", stalled.Max)
	}
	// Coordinated omission: the ~500 PINGs due during the stall are counted.
	if want := int64(stalled.Max / (2 * time.Millisecond) * 8 / 10); stalled.Count < want {
		t.Errorf("interval with a %s stall counts %d PINGs, want >= %d", stalled.Max, stalled.Count, want)
	}
	if stalled.P99 < 500*time.Millisecond {
		t.Errorf("P99 %s of an interval dominated by a 1 s stall", stalled.P99)
	}
	if roll.Max != stalled.Max || roll.Count < stalled.Count {
		t.Errorf("rolling summary %+v misses the stall %+v", roll, stalled)
	}
}

func TestProbeFrozenServerShowsInFlight(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	p, _ := startProbe(t, srv)
	servertest.WaitFor(t, 10*time.Second, "first PINGs", func() bool { return p.answered.Load() >= 10 })
	thaw := servertest.Freeze(t, srv)
	servertest.WaitFor(t, 10*time.Second, "an in-flight PING older than 700ms", func() bool {
		iv, roll := p.Summary()
		// The window holds answered PINGs only: the one in flight is the
		// interval's (Sample.Ping).
		return iv.InFlight >= 700*time.Millisecond && iv.Worst() == iv.InFlight && roll.InFlight == 0
	})
	thawAnswered(t, p, thaw, "frozen", 700*time.Millisecond)
}

// thawAnswered checks that p did not give up on its server while the
// server was stopped (how names the stop), thaws it, and waits until p has
// timed the PING the stop held: a round trip of at least held, and no PING
// in flight that long any more.
func thawAnswered(t *testing.T, p *Probe, thaw func(), how string, held time.Duration) {
	t.Helper()
	if e := p.err(); e != "" {
		t.Errorf("probe gave up on a %s server: %s", how, e)
	}
	thaw()
	var worst time.Duration
	servertest.WaitFor(t, 10*time.Second, "the "+how+" PING's answer", func() bool {
		iv, _ := p.Summary()
		worst = max(worst, iv.Max)
		return worst >= held && iv.InFlight < held
	})
}

func TestProbeReconnects(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	p, _ := startProbe(t, srv)
	servertest.WaitFor(t, 10*time.Second, "first PINGs", func() bool { return p.answered.Load() >= 10 })
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, 10*time.Second, "the probe to see the server gone", func() bool { return p.err() != "" })
	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := p.answered.Load()
	servertest.WaitFor(t, 10*time.Second, "PINGs after the restart", func() bool { return p.answered.Load() >= n+10 })
	if e := p.err(); e != "" {
		t.Errorf("error still set after reconnecting: %s", e)
	}
}

func TestProbeAuth(t *testing.T) {
	srv := servertest.Start(t, server.Options{Password: "pr0be-secret"})
	ep, _ := source.ParseAddress("redis://:pr0be-secret@" + srv.Addr)
	p := New(ep, nil, 2*time.Millisecond, 3*time.Second, 100*time.Millisecond)
	conn, err := p.dial(context.Background())
	if err != nil {
		t.Fatalf("dial with the right password: %v", err)
	}
	conn.Close()
	ep.Password = "wrong"
	if _, err := New(ep, nil, time.Millisecond, 3*time.Second, 0).dial(context.Background()); err == nil ||
		!strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("dial with a wrong password: %v", err)
	}
}

func TestProbeRecordDoesNotAllocate(t *testing.T) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	allocs := testing.AllocsPerRun(1000, func() { p.record(137*time.Microsecond, 0, false) })
	if allocs != 0 {
		t.Errorf("record allocates %.1f times", allocs)
	}
}

func TestProbeRollingWindowForgets(t *testing.T) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	p.record(3*time.Millisecond, 0, false)
	iv, roll := p.Summary()
	if iv.Count != 1 || roll.Count != 1 || roll.Max != 3*time.Millisecond {
		t.Fatalf("interval %+v rolling %+v", iv, roll)
	}
	// Age the slot past the window instead of waiting 10 s.
	for i := range p.ring {
		if p.ring[i].used {
			p.ring[i].end -= probeWindow + time.Second
		}
	}
	p.record(100*time.Microsecond, 0, false)
	_, roll = p.Summary()
	if roll.Count != 1 || roll.Max != 100*time.Microsecond {
		t.Errorf("rolling summary keeps an interval older than 10 s: %+v", roll)
	}
}

// TestProbeRollingMatchesFullMerge: the rolling summary, summed from the
// intervals' logs at each Summary, equals a merge of every interval in the
// window, stalls (coordinated-omission corrections) and intervals too long
// to log included, as slots are reused and intervals age out.
func TestProbeRollingMatchesFullMerge(t *testing.T) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	rng := rand.New(rand.NewPCG(1, 2))
	full := newProbeHist()
	// ref is each slot's interval as a histogram of its own, recorded by
	// the test beside the probe.
	ref := make([]*hdrhistogram.Histogram, len(p.ring))
	for round := range 3 * len(p.ring) {
		n := rng.IntN(40)
		if round%23 == 5 {
			n = probeSlotLog + 100 // more than a slot logs
		}
		ref[p.head] = newProbeHist()
		for range n {
			rtt := time.Duration(20+rng.IntN(400)) * time.Microsecond
			if rng.IntN(50) == 0 {
				rtt = time.Duration(1+rng.IntN(900)) * time.Millisecond // a stall
			}
			p.record(rtt, 0, false)
			us := min(max(int64(rtt/time.Microsecond), probeHistLowest), probeHistHighest)
			_ = ref[p.head].RecordCorrectedValue(us, p.intervalUS())
		}
		// Now and then some intervals age out of the window.
		if rng.IntN(5) == 0 {
			for i := range p.ring {
				if p.ring[i].used && rng.IntN(3) == 0 {
					p.ring[i].end -= probeWindow + time.Second
				}
			}
		}
		_, roll := p.Summary()
		full.Reset()
		from := time.Duration(p.now()) - probeWindow
		for i := range p.ring {
			if s := &p.ring[i]; s.used && s.end >= from && i != p.head {
				full.Merge(ref[i])
			}
		}
		want := latencyOf(full, roll.Min, roll.Max)
		if roll.Count != want.Count || roll.P50 != want.P50 || roll.P99 != want.P99 {
			t.Fatalf("round %d: rolling %+v, a merge of the window %+v", round, roll, want)
		}
	}
}

// BenchmarkProbeSummary closes an interval of 100 PINGs and sums a full
// 10 s ring (50 intervals of 200 ms), as the sampler does each sample.
func BenchmarkProbeSummary(b *testing.B) {
	benchSummary(b, New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond))
}

func benchSummary(b *testing.B, p *Probe) {
	for i := 0; i < len(p.ring); i++ {
		for j := 0; j < 100; j++ {
			p.record(time.Duration(50+j*7)*time.Microsecond, 0, false)
		}
		p.Summary()
	}
	b.ReportAllocs()
	for b.Loop() {
		for j := 0; j < 100; j++ {
			p.record(time.Duration(50+j*7)*time.Microsecond, 0, false)
		}
		p.Summary()
	}
}

// BenchmarkProbeRecord is the hot path of every PING after its round trip.
func BenchmarkProbeRecord(b *testing.B) {
	p := New(source.Endpoint{}, nil, 2*time.Millisecond, time.Second, 200*time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		p.record(87*time.Microsecond, 0, false)
	}
}

// BenchmarkProbePing measures the probe against a real server with PINGs
// back to back (an interval of 1 ns): ns/op is a loopback round trip plus
// the loop's own cost, allocs/op (counted over the whole process, the
// shared loop's goroutine included) shows whether a PING allocates.
func BenchmarkProbePing(b *testing.B) {
	srv := servertest.Start(b, server.Options{})
	ep, _ := source.ParseAddress(srv.Addr)
	p := New(ep, nil, time.Nanosecond, 3*time.Second, 200*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	// Connected and PINGing before the clock starts.
	for p.answered.Load() < 100 {
		runtime.Gosched()
	}
	poll := time.NewTicker(time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	target := p.answered.Load() + uint64(b.N)
	for p.answered.Load() < target {
		<-poll.C
	}
	b.StopTimer()
	poll.Stop()
	cancel()
	<-done
}

// BenchmarkProbeMemory is the heap a probe holds, at the default sampling
// interval and the PING interval of a hundred nodes (100 ms) and of a
// node probed finely (2 ms): bytes per probe after a GC.
//
//	go test ./source/probe -run '^$' -bench ProbeMemory -benchtime 3x
func BenchmarkProbeMemory(b *testing.B) {
	for _, iv := range []time.Duration{100 * time.Millisecond, 2 * time.Millisecond} {
		b.Run(iv.String(), func(b *testing.B) {
			const n = 100
			var per float64
			for b.Loop() {
				before := heapAlloc()
				ps := make([]*Probe, n)
				for i := range ps {
					ps[i] = New(source.Endpoint{}, nil, iv, time.Second, 200*time.Millisecond)
					for range 60 { // 12 s of samples: the ring full
						ps[i].record(300*time.Microsecond, 0, false)
						ps[i].Summary()
					}
				}
				per = float64(heapAlloc()-before) / n
				runtime.KeepAlive(ps)
			}
			b.ReportMetric(per, "bytes/probe")
		})
	}
}

func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
