package main

import (
	"context"
	"fmt"
	"time"
)

// The hundred-node fleet (issue 21): --nodes local servers with small
// datasets, vkwatch watching them all and drawing the fleet view in a
// 200x50 pseudo-terminal against vkwatch on two of them, alternating;
// then, in one more run of the fleet, a save on one node and the
// interval of the PINGs that node receives while it saves.

// The bounds by the fleet's size: issue 21's for a hundred nodes, issue
// 42's for a thousand (and the curve to two thousand, measured against
// them).
func hundredBounds(nodes int) (cpuRate float64, rss int64) {
	if nodes <= 100 {
		return 3.0, 100 << 20
	}
	return 5.0, 200 << 20
}

const (
	hundredKeys = 1000
	// A save of hundredKeys stretched by rdb-key-save-delay (µs per key)
	// to about 5 s, long enough to count its PINGs over saveWatch.
	hundredSaveDelay = 5000
	saveWatch        = 2 * time.Second
	// maxSavePingInterval is the saving node's interval, with a tenth of
	// slack for the PINGs a stall delays.
	maxSavePingInterval = 2200 * time.Microsecond
)

func runHundred(ctx context.Context, cfg config) ([]check, error) {
	fmt.Fprintf(cfg.out, "fleet of %d: starting the servers (%d keys each)\n", cfg.nodes, hundredKeys)
	// At hz 1, as a fleet at rest: a thousand servers at the default 10
	// would spend two cores on their own timers.
	srvs, stop, err := startServers(ctx, cfg.nodes, "--hz", "1")
	defer stop()
	if err != nil {
		return nil, err
	}
	for _, s := range srvs {
		if err := s.admin.Do(ctx, "DEBUG", "POPULATE", hundredKeys).Err(); err != nil {
			return nil, fmt.Errorf("DEBUG POPULATE on %s: %w", s.Addr, err)
		}
	}
	two := srvs[:2]
	var fleetCPU, twoCPU []float64
	var rss, twoRSS int64
	var fps float64
	for round := range cfg.rounds {
		err := alternate(round,
			func() error {
				fmt.Fprintf(cfg.out, "round %d: vkwatch on %d servers, drawing 200x50\n", round+1, len(srvs))
				r, err := measureVKWatch(ctx, cfg, srvs, cfg.span, true, nil)
				fleetCPU, rss, fps = append(fleetCPU, r.cpu), max(rss, r.rssMax), r.fps
				return err
			},
			func() error {
				fmt.Fprintf(cfg.out, "round %d: vkwatch on 2 of them, drawing 200x50\n", round+1)
				r, err := measureVKWatch(ctx, cfg, two, cfg.span, true, nil)
				twoCPU, twoRSS = append(twoCPU, r.cpu), max(twoRSS, r.rssMax)
				return err
			})
		if err != nil {
			return nil, err
		}
	}
	f, t := summarize(fleetCPU), summarize(twoCPU)
	var ratios []float64
	for i := range min(len(fleetCPU), len(twoCPU)) {
		ratios = append(ratios, fleetCPU[i]/twoCPU[i])
	}
	r := summarize(ratios)
	maxCPU, maxRSS := hundredBounds(len(srvs))
	checks := []check{{
		Target: fmt.Sprintf("CPU, vkwatch on %d idle local servers at hz 1 (%d keys each) drawing 200x50: <= %.0f x vkwatch on two of them", len(srvs), hundredKeys, maxCPU),
		Measured: fmt.Sprintf("%.2fx (rounds: median %.2f, min %.2f, max %.2f, n=%d): %d servers %.2f%% of a core (%.2f-%.2f%%), two %.2f%% (%.2f-%.2f%%); %.1f fps",
			f.Mean/t.Mean, r.Median, r.Min, r.Max, r.N, len(srvs), 100*f.Mean, 100*f.Min, 100*f.Max, 100*t.Mean, 100*t.Min, 100*t.Max, fps),
		Verdict: verdict(f.Mean/t.Mean <= maxCPU),
	}, {
		Target:   fmt.Sprintf("RSS, vkwatch on %d servers: <= %d MB", len(srvs), maxRSS>>20),
		Measured: fmt.Sprintf("max %.1f MiB (two servers: %.1f MiB)", mib(rss), mib(twoRSS)),
		Verdict:  verdict(rss <= maxRSS),
	}}
	c, err := savePingInterval(ctx, cfg, srvs)
	if err != nil {
		return checks, err
	}
	return append(checks, c), nil
}

// savePingInterval runs vkwatch on every server, starts a stretched
// BGSAVE on the first (not through vkwatch: its samples must find it)
// and counts the PINGs the saving node and an idle one execute over
// saveWatch once the save has run for a second.
func savePingInterval(ctx context.Context, cfg config, srvs []*testServer) (check, error) {
	target := fmt.Sprintf("PING interval of the node that saves, in a fleet of %d (vkwatch drawing 200x50): <= 2 ms (%s with slack)", len(srvs), maxSavePingInterval)
	bases, err := clientCounts(ctx, srvs)
	if err != nil {
		return check{}, err
	}
	a, err := startInPTY("vkwatch", cfg.vkwatchOn(srvs)...)
	if err != nil {
		return check{}, err
	}
	defer a.stop()
	for i, s := range srvs {
		if err := s.waitClients(ctx, bases[i]+2, 30*time.Second); err != nil {
			return check{}, err
		}
	}
	saver, idle := srvs[0], srvs[len(srvs)-1]
	undo, err := stretchedSave(ctx, saver)
	defer undo()
	if err != nil {
		return check{}, err
	}
	fmt.Fprintf(cfg.out, "save on %s (about %s): counting PINGs over %s\n", saver.Addr,
		time.Duration(hundredKeys*hundredSaveDelay)*time.Microsecond, saveWatch)
	seen, err := waitFinePings(ctx, saver)
	if err != nil {
		return check{Target: target, Measured: fmt.Sprintf("the saving node was not probed finely within %s of its save starting", seen.Round(time.Millisecond)), Verdict: "MISS"}, nil
	}
	fmt.Fprintf(cfg.out, "  probed finely %s after the save started\n", seen.Round(time.Millisecond))
	saving, other, n, wall, err := pingEvery(ctx, saver, idle)
	if err != nil {
		return check{}, err
	}
	still, err := saver.infoInt(ctx, "persistence", "rdb_bgsave_in_progress")
	if err != nil {
		return check{}, err
	}
	if still != 1 {
		return check{Target: target, Measured: "not measured: the save ended within the count", Verdict: "MISS"}, nil
	}
	return check{
		Target: target,
		Measured: fmt.Sprintf("%s (%d PINGs in %s, from %s after the save started; an idle node of the same fleet: one every %s)",
			saving.Round(10*time.Microsecond), n, wall.Round(time.Millisecond), seen.Round(time.Millisecond), other.Round(10*time.Microsecond)),
		Verdict: verdict(saving <= maxSavePingInterval),
	}, nil
}

// stretchedSave starts a BGSAVE on s slowed by hundredSaveDelay and waits
// until it runs; undo puts the delay back to 0.
func stretchedSave(ctx context.Context, s *testServer) (undo func(), err error) {
	undo = func() {}
	if err := s.admin.ConfigSet(ctx, "rdb-key-save-delay", fmt.Sprint(hundredSaveDelay)).Err(); err != nil {
		return undo, err
	}
	undo = func() { s.admin.ConfigSet(context.WithoutCancel(ctx), "rdb-key-save-delay", "0") }
	if err := s.admin.BgSave(ctx).Err(); err != nil {
		return undo, err
	}
	return undo, waitUntil(ctx, "the save to run", 10*time.Second, func() (bool, error) {
		n, err := s.infoInt(ctx, "persistence", "rdb_bgsave_in_progress")
		return n == 1, err
	})
}

// waitFinePings waits for the steady state that is measured: within 3 s
// of the 5 s save, vkwatch's samples have seen the save and its PINGs
// come finely, at least 20 in 100 ms. seen is how long that took (or how
// long it waited).
func waitFinePings(ctx context.Context, saver *testServer) (seen time.Duration, err error) {
	began := time.Now()
	err = waitUntil(ctx, "the saving node's PINGs to come finely", 3*time.Second, func() (bool, error) {
		a, err := pingCalls(ctx, []*testServer{saver})
		if err != nil {
			return false, err
		}
		time.Sleep(100 * time.Millisecond) // the measuring window, not a synchronisation
		b, err := pingCalls(ctx, []*testServer{saver})
		seen = time.Since(began)
		return b-a >= 20, err
	})
	return seen, err
}

// pingEvery counts the PINGs saver and idle execute over saveWatch: how
// far apart they came on each, n of them on saver in wall.
func pingEvery(ctx context.Context, saver, idle *testServer) (saving, other time.Duration, n int64, wall time.Duration, err error) {
	count := func() (int64, int64, time.Time, error) {
		s, err := pingCalls(ctx, []*testServer{saver})
		if err != nil {
			return 0, 0, time.Time{}, err
		}
		i, err := pingCalls(ctx, []*testServer{idle})
		return s, i, time.Now(), err
	}
	s0, i0, t0, err := count()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	time.Sleep(saveWatch) // the measuring window, not a synchronisation
	s1, i1, t1, err := count()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	wall = t1.Sub(t0)
	every := func(n int64) time.Duration {
		if n <= 0 {
			return wall
		}
		return wall / time.Duration(n)
	}
	return every(s1 - s0), every(i1 - i0), s1 - s0, wall, nil
}
