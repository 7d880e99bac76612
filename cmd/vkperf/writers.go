package main

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/load"
)

// Writers comparison: the same SET load as redis-benchmark's at the same
// concurrency, each run overwriting an existing keyspace.
const (
	wrClients  = 8
	wrKeyspace = 100_000
	wrOps      = 300_000
	wrValue    = 300
)

func runWriters(ctx context.Context, cfg config) ([]check, error) {
	rb, srv, err := benchServer(ctx)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	opts := &redis.Options{Addr: srv.Addr}
	lc := load.Config{Keys: wrKeyspace, ValueSize: wrValue, Writers: wrClients}
	rbArgs := []string{"-t", "set", "-c", strconv.Itoa(wrClients), "-d", strconv.Itoa(wrValue), "-r", strconv.Itoa(wrKeyspace), "-q"}
	// Both keyspaces exist before measuring.
	if err := load.Preload(ctx, opts, lc, nil); err != nil {
		return nil, err
	}
	if _, err := runBenchmark(ctx, rb, srv.Port, append([]string{"-P", "64", "-n", strconv.Itoa(3 * wrKeyspace)}, rbArgs...)...); err != nil {
		return nil, err
	}
	measured := append([]string{"-P", "1", "-n", strconv.Itoa(wrOps)}, rbArgs...)
	fmt.Fprintf(cfg.out, "server %s; %s %v vs %d vkwatch writers doing %d SETs, in alternating order\n",
		srv.Addr, rb, measured, wrClients, wrOps)

	var ratios []float64
	for i := 0; i < cfg.pairs; i++ {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		var theirs, ours float64
		var theirCPU, ourCPU time.Duration
		for _, mine := range order {
			if mine {
				ours, ourCPU, err = writersRun(ctx, opts, lc, wrOps)
			} else {
				var res []benchResult
				res, err = runBenchmark(ctx, rb, srv.Port, measured...)
				if err == nil {
					theirs, theirCPU = res[0].RPS, res[0].CPU
				}
			}
			if err != nil {
				return nil, err
			}
		}
		ratios = append(ratios, ours/theirs)
		fmt.Fprintf(cfg.out, "pair %d: redis-benchmark %8.0f SET/s (%.1f µs CPU/SET)  vkwatch writers %8.0f SET/s (%.1f µs CPU/SET)  ratio %.3f\n",
			i+1, theirs, float64(theirCPU.Microseconds())/wrOps, ours, float64(ourCPU.Microseconds())/wrOps, ours/theirs)
	}
	s := summarize(ratios)
	return []check{{
		Target:   "Load generator: vkwatch writers' SET/s >= 0.90 x redis-benchmark -c 8",
		Measured: s.ratioString(),
		Verdict:  verdict(s.Mean >= 0.90),
	}}, nil
}

// writersRun starts the writers and returns their SET rate over the time
// they took to complete ops SETs, and the CPU this process used meanwhile.
func writersRun(ctx context.Context, opts *redis.Options, lc load.Config, ops uint64) (float64, time.Duration, error) {
	w, err := load.StartWriters(ctx, opts, lc)
	if err != nil {
		return 0, 0, err
	}
	defer w.Stop()
	cpu0 := selfCPU()
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for w.Ops() < ops {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("writers did only %d SETs in 2 minutes (errors %d, last %v)", w.Ops(), w.Errors(), w.LastError())
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-poll.C:
		}
	}
	rate := float64(w.Ops()) / time.Since(start).Seconds()
	return rate, selfCPU() - cpu0, nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
