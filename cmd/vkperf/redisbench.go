package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// benchResult is one line of `redis-benchmark --csv`.
type benchResult struct {
	Test string
	RPS  float64
	P50  time.Duration
	// CPU is the user+system time redis-benchmark itself used.
	CPU  time.Duration
	Wall time.Duration
}

// toolPath finds the first of names on PATH.
func toolPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s is on PATH (apt-get install redis-tools)", strings.Join(names, ", "))
}

// runBenchmark runs the benchmark tool against port with args (-h, -p and
// --csv are added) and returns its result lines, in order.
func runBenchmark(ctx context.Context, bin string, port int, args ...string) ([]benchResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "--csv"}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", bin, strings.Join(full, " "), err)
	}
	res, err := parseBenchCSV(string(out))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", bin, strings.Join(full, " "), err)
	}
	for i := range res {
		res[i].CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		res[i].Wall = wall
	}
	return res, nil
}

// parseBenchCSV reads redis-benchmark's --csv output (a header line naming
// the columns, then one line per test). Columns are found by name, so a
// version that adds or reorders columns still parses; rps is required,
// p50_latency_ms is read when present.
func parseBenchCSV(out string) ([]benchResult, error) {
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parsing CSV: %w", err)
	}
	col := map[string]int{}
	var res []benchResult
	for _, rec := range recs {
		if len(rec) > 0 && rec[0] == "test" {
			for i, name := range rec {
				col[name] = i
			}
			continue
		}
		ri, ok := col["rps"]
		if !ok || len(rec) <= ri {
			continue
		}
		rps, err := strconv.ParseFloat(rec[ri], 64)
		if err != nil {
			return nil, fmt.Errorf("rps %q: %w", rec[ri], err)
		}
		b := benchResult{Test: rec[0], RPS: rps}
		if pi, ok := col["p50_latency_ms"]; ok && len(rec) > pi {
			ms, err := strconv.ParseFloat(rec[pi], 64)
			if err != nil {
				return nil, fmt.Errorf("p50 %q: %w", rec[pi], err)
			}
			b.P50 = time.Duration(ms * float64(time.Millisecond))
		}
		res = append(res, b)
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("no result line in %q", out)
	}
	return res, nil
}
