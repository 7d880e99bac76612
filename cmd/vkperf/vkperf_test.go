package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseBenchCSV(t *testing.T) {
	out := `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"PING_INLINE","64724.92","0.015","0.008","0.015","0.023","0.071","4.167"
"PING_MBULK","48661.80","0.020","0.008","0.017","0.023","0.079","3.895"
`
	res, err := parseBenchCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Test != "PING_INLINE" || res[1].Test != "PING_MBULK" {
		t.Fatalf("got %+v", res)
	}
	if res[0].RPS != 64724.92 || res[1].P50 != 17*time.Microsecond {
		t.Errorf("got %+v", res)
	}
	// Columns are found by name.
	res, err = parseBenchCSV("\"rps\",\"test\"\n\"SET\",\"x\"\n")
	if err == nil {
		t.Errorf("a non-number rps parsed: %+v", res)
	}
	if _, err := parseBenchCSV("WARNING: something\n"); err == nil {
		t.Error("output without a result line parsed")
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
BenchmarkParseInfoInto-2   	  437922	      3586 ns/op	1228.24 MB/s	       0 B/op	       0 allocs/op
BenchmarkPumpFlood-2   	 2444229	       903.2 ns/op	        19.59 frames/s	       124.8 max_drawn_ms	     87557 max_events/frame
BenchmarkFrame	100	1000 ns/op
PASS
`
	got := parseGoBench(out)
	if len(got) != 3 {
		t.Fatalf("got %d lines: %+v", len(got), got)
	}
	if got[0].name != "BenchmarkParseInfoInto" || got[0].metrics["ns/op"] != 3586 || got[0].metrics["allocs/op"] != 0 {
		t.Errorf("got %+v", got[0])
	}
	if got[1].name != "BenchmarkPumpFlood" || got[1].metrics["frames/s"] != 19.59 || got[1].metrics["max_events/frame"] != 87557 {
		t.Errorf("got %+v", got[1])
	}
	if got[2].name != "BenchmarkFrame" || got[2].metrics["ns/op"] != 1000 {
		t.Errorf("got %+v", got[2])
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]float64{3, 1, 2, 10})
	if s.Mean != 4 || s.Min != 1 || s.Max != 10 || s.Median != 2.5 || s.N != 4 {
		t.Errorf("got %+v", s)
	}
	if s := summarize(nil); !math.IsNaN(s.Mean) || s.N != 0 {
		t.Errorf("empty: got %+v", s)
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--pairs", "3", "--only", "cost,latency", "--soak", "10m"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.pairs != 3 || cfg.soak != 10*time.Minute || !cfg.only["cost"] || !cfg.only["latency"] || cfg.only["observer"] {
		t.Errorf("got %+v", cfg)
	}
	for _, bad := range [][]string{{"--only", "nope"}, {"--pairs", "0"}, {"extra"}} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestCPUShare(t *testing.T) {
	t0 := time.Now()
	a := usage{at: t0, cpu: time.Second}
	b := usage{at: t0.Add(10 * time.Second), cpu: 1500 * time.Millisecond}
	if got := cpuShare(a, b); math.Abs(got-0.05) > 1e-9 {
		t.Errorf("cpuShare = %v, want 0.05", got)
	}
}

func TestParseRefOutput(t *testing.T) {
	res, err := parseRefOutput("127.0.0.1:1 pings 4990 p50_ns 41000 mean_ns 52000 max_ns 900000\n127.0.0.1:2 pings 10 p50_ns 1 mean_ns 2 max_ns 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Addr != "127.0.0.1:1" || res[0].Pings != 4990 || res[0].P50 != 41*time.Microsecond ||
		res[0].Mean != 52*time.Microsecond || res[0].Max != 900*time.Microsecond || res[1].Pings != 10 {
		t.Errorf("got %+v", res)
	}
	if _, err := parseRefOutput("127.0.0.1:1 error connection closed\n"); err == nil || !strings.Contains(err.Error(), "connection closed") {
		t.Errorf("an error line: %v", err)
	}
	for _, bad := range []string{"", "usage: prober INTERVAL_US HOST:PORT...\n", "a pings x p50_ns 1 mean_ns 2 max_ns 3\n"} {
		if _, err := parseRefOutput(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParsePingCalls(t *testing.T) {
	text := "# Commandstats\r\ncmdstat_info:calls=3,usec=90,usec_per_call=30.00\r\ncmdstat_ping:calls=12345,usec=6000,usec_per_call=0.49\r\n"
	if n := parsePingCalls(text); n != 12345 {
		t.Errorf("got %d", n)
	}
	if n := parsePingCalls("# Commandstats\r\ncmdstat_info:calls=3\r\n"); n != 0 {
		t.Errorf("no PING yet: got %d", n)
	}
}
