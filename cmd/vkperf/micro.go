package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// microCount is how many times each Go benchmark runs; the median is
// reported, the spread shows the noise.
const microCount = 5

// microBenchmarks are the Go benchmarks of the hot paths, by package.
var microBenchmarks = []struct{ pkg, regex string }{
	{"./source", "^BenchmarkParseInfoInto$"},
	{"./source/probe", "^Benchmark(ProbePing|ProbeSummary)$"},
	{"./ui", "^Benchmark(Frame(|Scroll|View)|PumpFlood)$"},
}

// benchLine is one result line of go test -bench: metric unit -> value.
type benchLine struct {
	name    string
	metrics map[string]float64
}

var benchLineRE = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// parseGoBench reads the result lines of `go test -bench` output.
func parseGoBench(out string) []benchLine {
	var res []benchLine
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLineRE.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		bl := benchLine{name: m[1], metrics: map[string]float64{}}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			bl.metrics[f[i+1]] = v
		}
		res = append(res, bl)
	}
	return res
}

// runMicro runs the Go benchmarks and summarises the drawing and parsing
// targets.
func runMicro(ctx context.Context, cfg config) ([]check, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("not inside the vkwatch module: run vkperf from the checkout")
	}
	all, err := goBenchmarks(ctx, cfg, filepath.Dir(gomod))
	if err != nil {
		return nil, err
	}
	get := func(name, metric string) summary { return summarize(all[name][metric]) }
	for _, name := range sortedKeys(all) {
		fmt.Fprintf(cfg.out, "%-28s", name)
		for _, metric := range sortedKeys(all[name]) {
			s := get(name, metric)
			fmt.Fprintf(cfg.out, "  %s %s [%s..%s]", fmtNum(s.Median), metric, fmtNum(s.Min), fmtNum(s.Max))
		}
		fmt.Fprintln(cfg.out)
	}
	return microChecks(get), nil
}

// goBenchmarks runs microBenchmarks in the module at dir, microCount
// times each: name -> metric -> values over the runs.
func goBenchmarks(ctx context.Context, cfg config, dir string) (map[string]map[string][]float64, error) {
	all := map[string]map[string][]float64{}
	for _, mb := range microBenchmarks {
		args := []string{"test", "-run", "^$", "-bench", mb.regex, "-benchmem", "-count", strconv.Itoa(microCount), mb.pkg}
		fmt.Fprintf(cfg.out, "go %s\n", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		start := time.Now()
		b, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go test %s: %w\n%s", mb.pkg, err, b)
		}
		lines := parseGoBench(string(b))
		if len(lines) == 0 {
			return nil, fmt.Errorf("go test %s printed no benchmark result:\n%s", mb.pkg, b)
		}
		for _, l := range lines {
			if all[l.name] == nil {
				all[l.name] = map[string][]float64{}
			}
			for k, v := range l.metrics {
				all[l.name][k] = append(all[l.name][k], v)
			}
		}
		fmt.Fprintf(cfg.out, "  %d result lines in %s\n", len(lines), time.Since(start).Round(time.Second))
	}
	return all, nil
}

// microChecks are the drawing, parsing and probing targets, from get's
// summaries of the benchmarks' metrics.
func microChecks(get func(name, metric string) summary) []check {
	view := get("BenchmarkFrameView", "ns/op")
	frame := get("BenchmarkFrame", "ns/op")
	scroll := get("BenchmarkFrameScroll", "ns/op")
	parse := get("BenchmarkParseInfoInto", "ns/op")
	parseAllocs := get("BenchmarkParseInfoInto", "allocs/op")
	ping := get("BenchmarkProbePing", "ns/op")
	pingAllocs := get("BenchmarkProbePing", "allocs/op")
	fps := get("BenchmarkPumpFlood", "frames/s")
	perFrame := get("BenchmarkPumpFlood", "max_events/frame")
	wait := get("BenchmarkPumpFlood", "max_wait_ms")
	flood := get("BenchmarkPumpFlood", "ns/op")
	µs := func(ns float64) string { return fmt.Sprintf("%.0f µs", ns/1e3) }
	return []check{
		{
			Target:   "Drawing: View() of two panes at 200x50 <= 1 ms",
			Measured: fmt.Sprintf("%.0f ns (View returns the frame Update drew)", view.Median),
			Verdict:  verdict(view.Median <= 1e6),
		},
		{
			Target: "Drawing: a whole frame, Update with a sample of each server + View, 200x50 with charts the height of the terminal, full 2 min history <= 2 ms",
			Measured: fmt.Sprintf("%s median of %d (%s..%s); all charts scrolling: %s", µs(frame.Median), frame.N,
				µs(frame.Min), µs(frame.Max), µs(scroll.Median)),
			Verdict: verdict(frame.Median <= 2e6 && scroll.Median <= 2e6),
		},
		{
			Target: "INFO parsing allocation-light",
			Measured: fmt.Sprintf("ParseInfoInto %.0f ns/op, %.0f allocs/op, %.0f B/op (real INFO of 5 sections)",
				parse.Median, parseAllocs.Median, get("BenchmarkParseInfoInto", "B/op").Median),
			Verdict: verdict(parseAllocs.Median <= 1),
		},
		{
			Target:   "PING probe loop allocation-free",
			Measured: fmt.Sprintf("%.0f allocs/op, %s per back-to-back loopback PING", pingAllocs.Median, µs(ping.Median)),
			Verdict:  verdict(pingAllocs.Median == 0),
		},
		{
			Target: "Samples never queue up behind drawing: <= 20 UI frames/s under a flood, queue drained",
			Measured: fmt.Sprintf("%.1f frames/s while 2 producers add %.1f M events/s; largest batch %.0f events, longest wait %.0f ms",
				fps.Median, 1e3/flood.Median, perFrame.Median, wait.Median),
			Verdict: verdict(fps.Max <= maxFPS),
		},
	}
}

func fmtNum(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
