package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
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

// watch runs a source.Watcher on addr at default settings (as vkwatch
// does) and hands its samples to a channel; stop ends it.
type watch struct {
	samples chan *source.Sample
	cancel  context.CancelFunc
	done    chan struct{}
	w       *source.Watcher
}

func startWatch(ctx context.Context, addr string) (*watch, error) {
	ep, err := source.ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	wt := &watch{samples: make(chan *source.Sample, 4096), cancel: cancel, done: make(chan struct{}),
		w: source.NewWatcher(ep.Node(), ep, nil, source.WatchConfig{})}
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

func (wt *watch) stop() {
	wt.cancel()
	wt.w.Close()
	<-wt.done
}

// next returns the next sample, or an error after timeout.
func (wt *watch) next(ctx context.Context, timeout time.Duration) (*source.Sample, error) {
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
	rb, err := toolPath("valkey-benchmark", "redis-benchmark")
	if err != nil {
		return nil, err
	}
	srv, err := startServer(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	fmt.Fprintf(cfg.out, "idle server %s; each round runs, in rotating order: vkwatch's probe (PING every 2 ms) for %s;\n"+
		"  %s -t ping -c 1 -n %s; and two plain Go clients as controls: one PINGing every 2 ms like the probe, one back to back\n",
		srv.Addr, latencyWindow, rb, latencyPings)

	// µs per round
	var ours, inline, mbulk, paced, hot []float64
	steps := []func() error{
		func() error {
			lat, err := probeIdle(ctx, srv.Addr)
			ours = append(ours, float64(lat.P50)/1e3)
			return err
		},
		func() error {
			res, err := runBenchmark(ctx, rb, srv.Port, "-t", "ping", "-c", "1", "-n", latencyPings)
			for _, r := range res {
				switch r.Test {
				case "PING_INLINE":
					inline = append(inline, float64(r.P50)/1e3)
				case "PING_MBULK":
					mbulk = append(mbulk, float64(r.P50)/1e3)
				}
			}
			return err
		},
		func() error {
			p50, err := plainPings(ctx, srv.Addr, int(latencyWindow/probeInterval), probeInterval)
			paced = append(paced, float64(p50)/1e3)
			return err
		},
		func() error {
			p50, err := plainPings(ctx, srv.Addr, 50_000, 0)
			hot = append(hot, float64(p50)/1e3)
			return err
		},
	}
	for i := 0; i < cfg.pairs; i++ {
		for j := range steps {
			if err := steps[(i+j)%len(steps)](); err != nil {
				return nil, err
			}
		}
		if len(inline) <= i || len(mbulk) <= i {
			return nil, errors.New("redis-benchmark printed no PING_INLINE or PING_MBULK line")
		}
		fmt.Fprintf(cfg.out, "round %d p50: vkwatch %.1f µs; redis-benchmark PING_INLINE %.1f µs, PING_MBULK %.1f µs; plain client every 2 ms %.1f µs, back to back %.1f µs\n",
			i+1, ours[i], inline[i], mbulk[i], paced[i], hot[i])
	}
	o, m, in, pc, ht := summarize(ours), summarize(mbulk), summarize(inline), summarize(paced), summarize(hot)
	// vkwatch sends PING as a RESP array, as PING_MBULK does.
	ref := m.Median
	diff := o.Median - ref
	allowed := max(0.10*ref, 20)
	pdiff := o.Median - pc.Median
	pallowed := max(0.10*pc.Median, 20)
	truth := check{
		Target: "Latency truth: vkwatch PING p50 on an idle server within 10% (or 20 µs) of redis-benchmark -t ping -c 1",
		Measured: fmt.Sprintf("vkwatch %.1f µs vs PING_MBULK %.1f µs (PING_INLINE %.1f µs): %+.1f µs, allowed ±%.1f µs; medians of %d rounds (vkwatch %.0f-%.0f, PING_MBULK %.0f-%.0f)",
			o.Median, ref, in.Median, diff, allowed, o.N, o.Min, o.Max, m.Min, m.Max),
		Verdict: verdict(diff <= allowed && diff >= -allowed),
	}
	// A back-to-back PING on an idle loopback takes the same time every
	// round on a quiet machine; when it does not, something else was
	// running and the comparison says little.
	if m.Max > 1.5*m.Min {
		truth.Measured += fmt.Sprintf("; NOISY: the reference itself varied %.1fx across rounds, re-run on a quiet machine", m.Max/m.Min)
	}
	checks := []check{
		truth,
		{
			Target: "Latency truth, control: vkwatch p50 vs a plain Go client PINGing at the same 2 ms pace (and back to back)",
			Measured: fmt.Sprintf("vkwatch %.1f µs vs paced plain client %.1f µs: %+.1f µs (within 10%%/20 µs: %v); back-to-back plain client %.1f µs",
				o.Median, pc.Median, pdiff, pdiff <= pallowed && pdiff >= -pallowed, ht.Median),
			Verdict: "INFO",
		},
	}

	worsts, err := stalls(ctx, srv, cfg.pairs)
	if err != nil {
		return checks, err
	}
	all, lowest := true, worsts[0]
	var parts []string
	for _, w := range worsts {
		all = all && w >= debugSleep
		lowest = min(lowest, w)
		parts = append(parts, fmt.Sprintf("%.1f", float64(w)/float64(time.Millisecond)))
	}
	checks = append(checks, check{
		Target:   "Latency truth: DEBUG SLEEP 0.5 shows as a worst PING >= 500 ms",
		Measured: fmt.Sprintf("worst PING of %d stalls: %s ms", len(worsts), strings.Join(parts, ", ")),
		Verdict:  verdict(all),
	})
	return checks, nil
}

// probeInterval is vkwatch's default --ping-interval.
const probeInterval = 2 * time.Millisecond

// plainPings sends n PINGs on a connection of its own, one every interval
// (back to back when 0), and returns the median round trip: a control with
// nothing of vkwatch in it.
func plainPings(ctx context.Context, addr string, n int, interval time.Duration) (time.Duration, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	ping := []byte("*1\r\n$4\r\nPING\r\n")
	buf := make([]byte, 64)
	rtts := make([]time.Duration, 0, n)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	next := time.Now()
	for range n {
		if interval > 0 {
			if wait := time.Until(next); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			next = next.Add(interval)
		}
		t := time.Now()
		if _, err := c.Write(ping); err != nil {
			return 0, err
		}
		for {
			k, err := c.Read(buf)
			if err != nil {
				return 0, err
			}
			if k > 0 && buf[k-1] == '\n' {
				break
			}
		}
		rtts = append(rtts, time.Since(t))
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

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
