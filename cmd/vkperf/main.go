// Command vkperf measures what vkwatch costs, side by side with a reference
// in the same run: its CPU against a reference prober (a small C program,
// cmd/vkperf/refprober/prober.c, built with the system cc: the cheapest
// PING probe this machine allows) on the same servers at the same PING
// rate, drawing or recording, on one, two and six servers; its idle PING
// latency against the same prober's and redis-benchmark's; the observer
// effect on a SET load beside the prober's own; how fast its writers are;
// and the Go benchmarks of the hot paths. It ends with a table of target,
// measurement and PASS or MISS.
//
//	go run ./cmd/vkperf                         # everything, about 12 minutes on 2 cores
//	go run ./cmd/vkperf --only cost --soak 10m  # with the flat-memory run
//
// Everything runs on loopback against redis-server processes it starts
// itself on free ports (source/server), and is bounded in time. The machine
// should be otherwise quiet: every figure is a ratio or a share measured in
// one run, but a busy neighbour still adds noise, which the per-round
// minimum and maximum show.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vkwatch/vkwatch/cmd/internal/gobuild"
)

// config is the command line.
type config struct {
	pairs    int
	duration time.Duration
	requests int
	soak     time.Duration
	rounds   int           // alternating rounds of the CPU comparisons with the reference prober
	span     time.Duration // length of one CPU measurement in those rounds
	vkwatch  string
	ref      refProber
	only     map[string]bool
	cases    map[string]bool // of the cost phase's CPU comparisons; nil: every one, and the rest of the phase
	nodes    int             // servers of the hundred phase
	replayTo string          // where the replay phase keeps its recordings; empty: a temporary directory
	out      io.Writer
}

// phases, in the order they run.
var phases = []string{"micro", "latency", "writers", "observer", "cost", "hundred", "replay"}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkperf:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "vkperf:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("vkperf", flag.ContinueOnError)
	cfg := config{out: os.Stdout}
	fs.IntVar(&cfg.pairs, "pairs", 5, "alternating pairs per comparison (observer effect, latency, writers)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "about how long one SET load of the observer comparison lasts (its request count is calibrated once from this)")
	fs.IntVar(&cfg.requests, "requests", 0, "SETs per observer load run; 0 calibrates from --duration")
	fs.DurationVar(&cfg.soak, "soak", 0, "also watch two idle servers this long in one run (memory flat over time is judged from 6m); 0: no soak run")
	fs.IntVar(&cfg.rounds, "rounds", 3, "alternating rounds of the CPU comparisons with the reference prober")
	fs.DurationVar(&cfg.span, "span", 10*time.Second, "length of one CPU measurement in those rounds")
	fs.StringVar(&cfg.vkwatch, "vkwatch", "", "vkwatch binary to measure; empty: go build ./cmd/vkwatch into a temporary directory")
	fs.StringVar(&cfg.replayTo, "replay-dir", "", "keep the replay phase's recordings here (made once, reused when there); empty: a temporary directory")
	fs.IntVar(&cfg.nodes, "nodes", 100, "servers of the hundred phase (small datasets)")
	cases := fs.String("cases", "", "only these CPU comparisons of the cost phase, comma-separated ("+strings.Join(caseNames(), ",")+"), and nothing else of it; empty: all")
	only := fs.String("only", strings.Join(phases, ","), "phases to run, comma-separated: "+strings.Join(phases, ","))
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.pairs < 1 || cfg.rounds < 1 || cfg.nodes < 2 || cfg.duration < time.Second || cfg.span < 5*time.Second ||
		(cfg.soak != 0 && cfg.soak < 10*time.Second) {
		return cfg, errors.New("--pairs >= 1, --rounds >= 1, --nodes >= 2, --duration >= 1s, --span >= 5s and --soak 0 or >= 10s")
	}
	if *cases != "" {
		cfg.cases = map[string]bool{}
		for _, c := range strings.Split(*cases, ",") {
			c = strings.TrimSpace(c)
			if !slices.Contains(caseNames(), c) {
				return cfg, fmt.Errorf("--cases: unknown case %q (want %s)", c, strings.Join(caseNames(), ","))
			}
			cfg.cases[c] = true
		}
	}
	cfg.only = map[string]bool{}
	for _, p := range strings.Split(*only, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		known := false
		for _, q := range phases {
			known = known || p == q
		}
		if !known {
			return cfg, fmt.Errorf("--only: unknown phase %q (want %s)", p, strings.Join(phases, ","))
		}
		cfg.only[p] = true
	}
	return cfg, nil
}

// check is one row of the final table.
type check struct {
	Target   string
	Measured string
	Verdict  string // PASS, MISS, or INFO for a figure without a target
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// run runs the selected phases and prints the table.
func run(ctx context.Context, cfg config) error {
	start := time.Now()
	fmt.Fprintf(cfg.out, "vkperf: %s, %d CPUs, %s\n", time.Now().Format(time.RFC3339), nproc(), cpuModel())
	var checks []check
	var errs []error
	needBin := cfg.only["observer"] || cfg.only["cost"] || cfg.only["hundred"] || cfg.only["replay"]
	needRef := needBin || cfg.only["latency"]
	dir, err := os.MkdirTemp("", "vkperf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if needBin && cfg.vkwatch == "" {
		bin, err := gobuild.VKWatch(ctx, dir, "vkperf")
		if err != nil {
			return err
		}
		cfg.vkwatch = bin
	}
	if needRef {
		cfg.ref = buildRefProber(ctx, dir)
		if cfg.ref.ok() {
			fmt.Fprintf(cfg.out, "reference prober: cmd/vkperf/refprober/prober.c built with cc (one thread per server, clock_nanosleep to absolute deadlines, blocking write and read of PING)\n")
		} else {
			fmt.Fprintf(cfg.out, "reference prober: NOT AVAILABLE: %s; the comparisons with it will say they could not run\n", cfg.ref.missing)
		}
	}
	for _, p := range phases {
		if !cfg.only[p] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(cfg.out, "\n== %s ==\n", p)
		var cs []check
		var err error
		switch p {
		case "micro":
			cs, err = runMicro(ctx, cfg)
		case "observer":
			cs, err = runObserver(ctx, cfg)
		case "cost":
			cs, err = runCost(ctx, cfg)
			if err == nil && cfg.cases == nil {
				var fleet []check
				fleet, err = runFleetCost(ctx, cfg)
				cs = append(cs, fleet...)
			}
		case "hundred":
			cs, err = runHundred(ctx, cfg)
		case "latency":
			cs, err = runLatency(ctx, cfg)
		case "writers":
			cs, err = runWriters(ctx, cfg)
		case "replay":
			cs, err = runReplay(ctx, cfg, dir)
		}
		checks = append(checks, cs...)
		if err != nil {
			fmt.Fprintf(cfg.out, "%s: %v\n", p, err)
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	fmt.Fprintf(cfg.out, "\n== results (%s) ==\n\n", time.Since(start).Round(time.Second))
	printTable(cfg.out, checks)
	return errors.Join(errs...)
}

// printTable prints the checks as a Markdown table, ready for the README.
func printTable(w io.Writer, checks []check) {
	fmt.Fprintln(w, "| target | measured | |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, c := range checks {
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.Target, c.Measured, c.Verdict)
	}
}

func nproc() int { return runtime.NumCPU() }

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "cpu unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "cpu unknown"
}
