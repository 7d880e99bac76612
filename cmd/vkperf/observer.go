package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Observer-effect load: redis-benchmark SETs, 8 clients, no pipelining,
// 300-byte values over a keyspace of 100,000 keys that exists beforehand
// (so every SET overwrites a key, and memory does not grow between runs).
const (
	minObserverRatio = 0.97
	obsClients       = "8"
	obsKeyspace      = 100_000
	obsValue         = "300"
)

// watcherTool is a program attached to the server during a load run.
type watcherTool struct {
	name  string
	argv  func(s *testServer) []string
	conns int64 // connections it keeps open: it is attached when they are
	pty   bool  // runs in a 200x50 pseudo-terminal; else with no terminal
	// frames is the number of full-screen frames that show it is drawing
	// (0: any output).
	frames int64
}

// observerTools are vkwatch at defaults, drawing; the same with its spike
// reading off (--spikes=false: what reading SLOWLOG, LATENCY and /proc
// after each spike costs is the difference); and the reference prober
// PINGing every 2 ms: its effect is the floor of any 2 ms probe.
func observerTools(vkwatchBin string, ref refProber) []watcherTool {
	tools := []watcherTool{{
		name:   "vkwatch",
		argv:   func(s *testServer) []string { return []string{vkwatchBin, s.Addr} },
		conns:  2, // the sampler and the PING probe
		pty:    true,
		frames: 2,
	}, {
		name:   "vkwatch, no spikes",
		argv:   func(s *testServer) []string { return []string{vkwatchBin, "--spikes=false", s.Addr} },
		conns:  2,
		pty:    true,
		frames: 2,
	}}
	if ref.ok() {
		tools = append(tools, watcherTool{
			name:  "reference prober",
			argv:  func(s *testServer) []string { return ref.argv(probeInterval, []*testServer{s}, false) },
			conns: 1,
		})
	}
	return tools
}

// observation is one load run.
type observation struct {
	rps     float64
	toolCPU float64 // share of one core the attached tool used during the run
	toolRSS int64
}

func runObserver(ctx context.Context, cfg config) ([]check, error) {
	rb, srv, err := benchServer(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()

	keyspace := strconv.Itoa(obsKeyspace)
	// Fill the keyspace (pipelined, fast), then calibrate the run length.
	if _, err := runBenchmark(ctx, rb, srv.Port, "-t", "set", "-n", strconv.Itoa(3*obsKeyspace), "-P", "16",
		"-c", obsClients, "-d", obsValue, "-r", keyspace, "-q"); err != nil {
		return nil, err
	}
	n := cfg.requests
	if n <= 0 {
		res, err := runBenchmark(ctx, rb, srv.Port, "-t", "set", "-n", "100000", "-c", obsClients, "-P", "1",
			"-d", obsValue, "-r", keyspace, "-q")
		if err != nil {
			return nil, err
		}
		n = max(50_000, int(math.Round(res[0].RPS*cfg.duration.Seconds()/10_000))*10_000)
	}
	load := []string{"-t", "set", "-n", strconv.Itoa(n), "-c", obsClients, "-P", "1", "-d", obsValue, "-r", keyspace, "-q"}
	fmt.Fprintf(cfg.out, "load: %s %v (server %s)\n", rb, load, srv.Addr)

	tools := observerTools(cfg.vkwatch, cfg.ref)
	fmt.Fprintf(cfg.out, "each round runs the load without a tool and with each tool attached, the order rotating from round to round\n")
	ratios := make([][]float64, len(tools))
	cpus := make([][]float64, len(tools))
	for i := 0; i < cfg.pairs; i++ {
		// Run -1 is the load alone; the others attach tools[k].
		runs := make([]observation, len(tools)+1)
		for j := range len(runs) {
			k := (i+j)%len(runs) - 1
			var t watcherTool
			if k >= 0 {
				t = tools[k]
			}
			o, err := observe(ctx, srv, rb, load, t, k >= 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			runs[k+1] = o
		}
		without := runs[0]
		for ti, t := range tools {
			with := runs[ti+1]
			r := with.rps / without.rps
			ratios[ti] = append(ratios[ti], r)
			cpus[ti] = append(cpus[ti], with.toolCPU)
			fmt.Fprintf(cfg.out, "round %d %-18s without %8.0f  with %8.0f SET/s  ratio %.3f  (tool: %4.1f%% CPU, %.1f MiB)\n",
				i+1, t.name, without.rps, with.rps, r, 100*with.toolCPU, mib(with.toolRSS))
		}
	}

	// vkwatch's row carries the reference's effect beside it: the floor.
	s := summarize(ratios[0])
	c := summarize(cpus[0])
	row := check{
		Target:   fmt.Sprintf("Observer effect: SET/s with vkwatch attached (defaults, drawing) >= %.2f x without", minObserverRatio),
		Measured: s.ratioString() + fmt.Sprintf("; vkwatch used %.1f%% of a core", 100*c.Mean),
		Verdict:  verdict(s.Mean >= minObserverRatio),
	}
	ns, nc := summarize(ratios[1]), summarize(cpus[1])
	row.Measured += fmt.Sprintf("; with its spike reading off (--spikes=false) in the same run: %s, %.1f%% of a core", ns.ratioString(), 100*nc.Mean)
	if len(tools) > 2 {
		rs, rc := summarize(ratios[2]), summarize(cpus[2])
		row.Measured += fmt.Sprintf("; the reference prober (PING every 2 ms) in the same run: %s, %.1f%% of a core", rs.ratioString(), 100*rc.Mean)
	} else {
		row.Measured += "; the reference prober could not run: " + cfg.ref.missing
	}
	return []check{row}, nil
}

// observe runs the load once, with t attached in a pseudo-terminal or not.
func observe(ctx context.Context, srv *testServer, rb string, load []string, t watcherTool, attach bool) (observation, error) {
	var a *attached
	if attach {
		base, err := srv.clients(ctx)
		if err != nil {
			return observation{}, err
		}
		start := startInPTY
		if !t.pty {
			start = startHeadless
		}
		a, err = start(t.name, t.argv(srv)...)
		if err != nil {
			return observation{}, err
		}
		defer a.stop()
		if err := srv.waitClients(ctx, base+t.conns, 15*time.Second); err != nil {
			return observation{}, err
		}
		if err := waitUntil(ctx, t.name+" drawing", 15*time.Second, func() (bool, error) {
			if a.exited() {
				return false, fmt.Errorf("%s %w: %v", t.name, errExited, a.err)
			}
			return !t.pty || (a.bytes.Load() > 0 && a.frames.Load() >= t.frames), nil
		}); err != nil {
			return observation{}, err
		}
	}
	var u0 usage
	if a != nil {
		var err error
		if u0, err = readUsage(a.pid()); err != nil {
			return observation{}, err
		}
	}
	res, err := runBenchmark(ctx, rb, srv.Port, load...)
	if err != nil {
		return observation{}, err
	}
	o := observation{rps: res[0].RPS}
	if a != nil {
		u1, err := readUsage(a.pid())
		if err != nil {
			return observation{}, err
		}
		if a.exited() {
			return observation{}, fmt.Errorf("%s exited during the run: %v", t.name, a.err)
		}
		o.toolCPU, o.toolRSS = cpuShare(u0, u1), u1.rss
	}
	return o, nil
}
