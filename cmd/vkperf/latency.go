package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/watch"
)

const (
	// latencyWindow is how long vkwatch's probe measures per round: the
	// span of Sample.Ping10s, so that its last sample summarises exactly
	// the round.
	latencyWindow = 10 * time.Second
	// latencyPings is redis-benchmark's PING count per test per round.
	latencyPings = "100000"
	// debugSleep is the stall that must show as the worst PING.
	debugSleep = 500 * time.Millisecond
)

// watched runs a watch.Watcher on addr at default settings (as vkwatch
// does) and hands its samples to a channel; stop ends it.
type watched struct {
	samples chan *source.Sample
	cancel  context.CancelFunc
	done    chan struct{}
	w       *watch.Watcher
}

func startWatch(ctx context.Context, addr string) (*watched, error) {
	ep, err := source.ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	wt := &watched{samples: make(chan *source.Sample, 4096), cancel: cancel, done: make(chan struct{}),
		w: watch.New(ep.Node(), ep, nil, watch.Config{})}
	if _, err := wt.w.Connect(ctx); err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(wt.done)
		wt.w.Run(ctx, func(ev source.Event) {
			if ev.Kind == source.EventSample {
				select {
				case wt.samples <- ev.Sample:
				default: // nobody reads: the phase is over
				}
			}
		})
	}()
	return wt, nil
}

func (wt *watched) stop() {
	wt.cancel()
	wt.w.Close()
	<-wt.done
}

// next returns the next sample, or an error after timeout.
func (wt *watched) next(ctx context.Context, timeout time.Duration) (*source.Sample, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case s := <-wt.samples:
		return s, nil
	case <-t.C:
		return nil, fmt.Errorf("no sample within %s", timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func runLatency(ctx context.Context, cfg config) ([]check, error) {
	rb, srv, err := benchServer(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	fmt.Fprintf(cfg.out, "idle server %s; each round runs, in rotating order: vkwatch's probe (PING every 2 ms) for %s;\n"+
		"  the reference prober (PING every 2 ms) for %s; and %s -t ping -c 1 -n %s (back to back)\n",
		srv.Addr, latencyWindow, latencyWindow, rb, latencyPings)
	r, err := measureLatency(ctx, cfg, rb, srv)
	if err != nil {
		return nil, err
	}
	checks := []check{r.refCheck(cfg), r.truthCheck()}
	worsts, err := stalls(ctx, srv, cfg.pairs)
	if err != nil {
		return checks, err
	}
	return append(checks, stallCheck(worsts)), nil
}

// latencyRounds are the idle PING p50 of each round, in µs, of vkwatch's
// probe, the reference prober and redis-benchmark's two PING tests.
type latencyRounds struct{ ours, ref, inline, mbulk []float64 }

// measureLatency runs cfg.pairs rounds of the three, in rotating order.
func measureLatency(ctx context.Context, cfg config, rb string, srv *testServer) (latencyRounds, error) {
	var r latencyRounds
	steps := []func() error{
		func() error {
			lat, err := probeIdle(ctx, srv.Addr)
			r.ours = append(r.ours, float64(lat.P50)/1e3)
			return err
		},
		func() error {
			if !cfg.ref.ok() {
				return nil
			}
			p50, err := refIdle(ctx, cfg, srv)
			r.ref = append(r.ref, float64(p50)/1e3)
			return err
		},
		func() error {
			res, err := runBenchmark(ctx, rb, srv.Port, "-t", "ping", "-c", "1", "-n", latencyPings)
			for _, b := range res {
				switch b.Test {
				case "PING_INLINE":
					r.inline = append(r.inline, float64(b.P50)/1e3)
				case "PING_MBULK":
					r.mbulk = append(r.mbulk, float64(b.P50)/1e3)
				}
			}
			return err
		},
	}
	for i := 0; i < cfg.pairs; i++ {
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return r, err
			}
		}
		if len(r.inline) <= i || len(r.mbulk) <= i {
			return r, errors.New("redis-benchmark printed no PING_INLINE or PING_MBULK line")
		}
		refText := "not run"
		if len(r.ref) > i {
			refText = fmt.Sprintf("%.1f µs", r.ref[i])
		}
		fmt.Fprintf(cfg.out, "round %d p50: vkwatch %.1f µs; reference prober %s; redis-benchmark PING_INLINE %.1f µs, PING_MBULK %.1f µs\n",
			i+1, r.ours[i], refText, r.inline[i], r.mbulk[i])
	}
	return r, nil
}

// refCheck holds vkwatch's p50 against the reference prober's.
func (r latencyRounds) refCheck(cfg config) check {
	o := summarize(r.ours)
	c := check{
		Target: fmt.Sprintf("Latency: vkwatch's idle PING p50 <= %.1f x the reference prober's, both PINGing every 2 ms", maxP50Ratio),
	}
	if !cfg.ref.ok() {
		c.Measured, c.Verdict = "could not run: "+cfg.ref.missing, "MISS"
		return c
	}
	rs := summarize(r.ref)
	c.Measured = fmt.Sprintf("%.2f: vkwatch %.1f µs vs reference %.1f µs, medians of %d rounds (vkwatch %.0f-%.0f, reference %.0f-%.0f); "+
		"vkwatch times a reply by the kernel's receive timestamp, the reference by clock_gettime after read()",
		o.Median/rs.Median, o.Median, rs.Median, o.N, o.Min, o.Max, rs.Min, rs.Max)
	c.Verdict = verdict(o.Median <= maxP50Ratio*rs.Median)
	return c
}

// truthCheck holds vkwatch's p50 against redis-benchmark's PING_MBULK:
// vkwatch sends PING as a RESP array, as PING_MBULK does.
func (r latencyRounds) truthCheck() check {
	o, m, in := summarize(r.ours), summarize(r.mbulk), summarize(r.inline)
	diff := o.Median - m.Median
	allowed := max(0.10*m.Median, 20)
	truth := check{
		Target: "Latency truth: vkwatch PING p50 on an idle server within 10% (or 20 µs) of redis-benchmark -t ping -c 1",
		Measured: fmt.Sprintf("vkwatch %.1f µs vs PING_MBULK %.1f µs (PING_INLINE %.1f µs): %+.1f µs, allowed ±%.1f µs; medians of %d rounds (vkwatch %.0f-%.0f, PING_MBULK %.0f-%.0f)",
			o.Median, m.Median, in.Median, diff, allowed, o.N, o.Min, o.Max, m.Min, m.Max),
		Verdict: verdict(diff <= allowed && diff >= -allowed),
	}
	// A back-to-back PING on an idle loopback takes the same time every
	// round on a quiet machine; when it does not, something else was
	// running and the comparison says little.
	if m.Max > 1.5*m.Min {
		truth.Measured += fmt.Sprintf("; NOISY: the reference itself varied %.1fx across rounds, re-run on a quiet machine", m.Max/m.Min)
	}
	return truth
}

// stallCheck: every DEBUG SLEEP shows as a worst PING at least as long.
func stallCheck(worsts []time.Duration) check {
	all := true
	var parts []string
	for _, w := range worsts {
		all = all && w >= debugSleep
		parts = append(parts, fmt.Sprintf("%.1f", float64(w)/float64(time.Millisecond)))
	}
	return check{
		Target:   "Latency truth: DEBUG SLEEP 0.5 shows as a worst PING >= 500 ms",
		Measured: fmt.Sprintf("worst PING of %d stalls: %s ms", len(worsts), strings.Join(parts, ", ")),
		Verdict:  verdict(all),
	}
}

// maxP50Ratio is how much higher vkwatch's idle p50 may be than the
// reference prober's.
const maxP50Ratio = 1.2

// refIdle runs the reference prober on srv for latencyWindow and returns
// the median round trip it measured.
func refIdle(ctx context.Context, cfg config, srv *testServer) (time.Duration, error) {
	base, err := srv.clients(ctx)
	if err != nil {
		return 0, err
	}
	a, err := startHeadless("reference prober", cfg.ref.argv(probeInterval, []*testServer{srv}, false)...)
	if err != nil {
		return 0, err
	}
	defer a.stop()
	if err := srv.waitClients(ctx, base+1, 15*time.Second); err != nil {
		return 0, err
	}
	t := time.NewTimer(latencyWindow)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if err := a.stop(); err != nil {
		return 0, err
	}
	res, err := parseRefOutput(a.output())
	if err != nil {
		return 0, err
	}
	return res[0].P50, nil
}

// probeInterval is vkwatch's default --ping-interval.
const probeInterval = 2 * time.Millisecond

// probeIdle watches addr for latencyWindow and returns the PING latency of
// that window, as vkwatch shows it (p50/p99/max over the last 10 s).
func probeIdle(ctx context.Context, addr string) (source.Latency, error) {
	wt, err := startWatch(ctx, addr)
	if err != nil {
		return source.Latency{}, err
	}
	defer wt.stop()
	first, err := wt.next(ctx, 5*time.Second)
	if err != nil {
		return source.Latency{}, err
	}
	for {
		s, err := wt.next(ctx, 5*time.Second)
		if err != nil {
			return source.Latency{}, err
		}
		if s.Offset-first.Offset >= latencyWindow {
			if s.Ping10s.Count == 0 {
				return source.Latency{}, errors.New("vkwatch's probe recorded no PING")
			}
			return s.Ping10s, nil
		}
	}
}

// stalls sends DEBUG SLEEP 0.5 n times, a second apart, while vkwatch
// watches, and returns the worst PING its samples show for each stall.
func stalls(ctx context.Context, srv *testServer, n int) ([]time.Duration, error) {
	wt, err := startWatch(ctx, srv.Addr)
	if err != nil {
		return nil, err
	}
	defer wt.stop()
	// Two samples: the probe is running.
	for range 2 {
		if _, err := wt.next(ctx, 5*time.Second); err != nil {
			return nil, err
		}
	}
	var worsts []time.Duration
	for range n {
		// Forget the samples from before this stall.
		for len(wt.samples) > 0 {
			<-wt.samples
		}
		if err := srv.admin.Do(ctx, "debug", "sleep", fmt.Sprintf("%.1f", debugSleep.Seconds())).Err(); err != nil {
			return nil, fmt.Errorf("DEBUG SLEEP: %w", err)
		}
		// The stall's PING is in a sample within a few hundred ms; read
		// on for a second.
		var worst time.Duration
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			s, err := wt.next(ctx, 5*time.Second)
			if err != nil {
				return nil, err
			}
			worst = max(worst, s.Ping.Worst())
		}
		worsts = append(worsts, worst)
	}
	return worsts, nil
}
