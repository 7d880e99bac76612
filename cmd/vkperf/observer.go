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
	obsClients  = "8"
	obsKeyspace = 100_000
	obsValue    = "300"
)

// watcherTool is a program attached to the server during a load run.
type watcherTool struct {
	name  string
	argv  func(s *testServer) []string
	conns int64 // connections it keeps open: it is attached when they are
	// frames is the number of full-screen frames that show it is drawing
	// (0: any output).
	frames int64
}

func observerTools(vkwatchBin, cli string) []watcherTool {
	return []watcherTool{
		{
			name:   "vkwatch",
			argv:   func(s *testServer) []string { return []string{vkwatchBin, s.Addr} },
			conns:  2, // the sampler and the PING probe
			frames: 2,
		},
		{
			name: "redis-cli --stat",
			argv: func(s *testServer) []string {
				return []string{cli, "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "--stat"}
			},
			conns: 1,
		},
		{
			name: "redis-cli --latency",
			argv: func(s *testServer) []string {
				return []string{cli, "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "--latency"}
			},
			conns: 1,
		},
	}
}

// observation is one load run.
type observation struct {
	rps     float64
	toolCPU float64 // share of one core the attached tool used during the run
	toolRSS int64
}

func runObserver(ctx context.Context, cfg config) ([]check, error) {
	rb, err := toolPath("valkey-benchmark", "redis-benchmark")
	if err != nil {
		return nil, err
	}
	cli, err := toolPath("valkey-cli", "redis-cli")
	if err != nil {
		return nil, err
	}
	srv, err := startServer(ctx)
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
	fmt.Fprintf(cfg.out, "each pair runs the load without and with the tool attached, in alternating order\n")

	tools := observerTools(cfg.vkwatch, cli)
	ratios := make([][]float64, len(tools))
	cpus := make([][]float64, len(tools))
	rss := make([]int64, len(tools))
	for i := 0; i < cfg.pairs; i++ {
		for ti, t := range tools {
			order := []bool{false, true}
			if i%2 == 1 {
				order = []bool{true, false}
			}
			var with, without observation
			for _, attach := range order {
				o, err := observe(ctx, srv, rb, load, t, attach)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", t.name, err)
				}
				if attach {
					with = o
				} else {
					without = o
				}
			}
			r := with.rps / without.rps
			ratios[ti] = append(ratios[ti], r)
			cpus[ti] = append(cpus[ti], with.toolCPU)
			rss[ti] = max(rss[ti], with.toolRSS)
			fmt.Fprintf(cfg.out, "pair %d %-20s without %8.0f  with %8.0f SET/s  ratio %.3f  (tool: %4.1f%% CPU, %.1f MiB)\n",
				i+1, t.name, without.rps, with.rps, r, 100*with.toolCPU, mib(with.toolRSS))
		}
	}

	var checks []check
	for ti, t := range tools {
		s := summarize(ratios[ti])
		c := summarize(cpus[ti])
		row := check{
			Target:   fmt.Sprintf("Observer effect: SET/s with %s attached / without", t.name),
			Measured: s.ratioString() + fmt.Sprintf("; %s used %.1f%% of a core, %.0f MiB", t.name, 100*c.Mean, mib(rss[ti])),
			Verdict:  "INFO",
		}
		if t.name == "vkwatch" {
			row.Target = "Observer effect: SET/s with vkwatch attached (defaults) >= 0.99 x without"
			row.Verdict = verdict(s.Mean >= 0.99)
		}
		checks = append(checks, row)
	}
	return checks, nil
}

// observe runs the load once, with t attached in a pseudo-terminal or not.
func observe(ctx context.Context, srv *testServer, rb string, load []string, t watcherTool, attach bool) (observation, error) {
	var a *attached
	if attach {
		base, err := srv.clients(ctx)
		if err != nil {
			return observation{}, err
		}
		a, err = startInPTY(t.name, t.argv(srv)...)
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
			return a.bytes.Load() > 0 && a.frames.Load() >= t.frames, nil
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
