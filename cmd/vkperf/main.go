// Command vkperf measures what vkwatch costs: the server it watches (the
// observer effect, side by side with redis-cli --stat and --latency), the
// machine it runs on (its own CPU and memory while drawing in a real
// pseudo-terminal), how true its PING latency is (against redis-benchmark
// in the same run) and how fast its writers are (against redis-benchmark at
// the same concurrency). It also runs the Go benchmarks of the hot paths.
// It ends with a table of target, measurement and PASS or MISS.
//
//	go run ./cmd/vkperf                       # everything, about 12 minutes on 2 cores
//	go run ./cmd/vkperf --only cost --soak 10m  # the flat-memory run
//
// Everything runs on loopback against redis-server processes it starts
// itself on free ports (source/server), and is bounded in time. The machine
// should be otherwise quiet: every figure is a ratio or a share measured in
// one run, but a busy neighbour still adds noise, which the per-pair
// minimum and maximum show.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// config is the command line.
type config struct {
	pairs    int
	duration time.Duration
	requests int
	soak     time.Duration
	vkwatch  string
	only     map[string]bool
	out      io.Writer
}

// phases, in the order they run.
var phases = []string{"micro", "latency", "writers", "observer", "cost"}

func main() {
	// vkperf re-executes itself as the control processes of the own-cost
	// breakdown: vkperf --control MODE ADDR...
	if len(os.Args) > 2 && os.Args[1] == "--control" {
		if err := runControl(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "vkperf --control:", err)
			os.Exit(1)
		}
		return
	}
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
	fs.DurationVar(&cfg.soak, "soak", 60*time.Second, "how long vkwatch watches two idle servers in the own-cost run")
	fs.StringVar(&cfg.vkwatch, "vkwatch", "", "vkwatch binary to measure; empty: go build ./cmd/vkwatch into a temporary directory")
	only := fs.String("only", strings.Join(phases, ","), "phases to run, comma-separated: "+strings.Join(phases, ","))
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.pairs < 1 || cfg.duration < time.Second || cfg.soak < 10*time.Second {
		return cfg, errors.New("--pairs >= 1, --duration >= 1s and --soak >= 10s")
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
	needBin := cfg.only["observer"] || cfg.only["cost"]
	if needBin && cfg.vkwatch == "" {
		dir, err := os.MkdirTemp("", "vkperf-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin, err := buildVKWatch(ctx, dir)
		if err != nil {
			return err
		}
		cfg.vkwatch = bin
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
			if err == nil {
				var fleet []check
				fleet, err = runFleetCost(ctx, cfg)
				cs = append(cs, fleet...)
			}
		case "latency":
			cs, err = runLatency(ctx, cfg)
		case "writers":
			cs, err = runWriters(ctx, cfg)
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

// buildVKWatch builds ./cmd/vkwatch of the module vkperf runs in.
func buildVKWatch(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the vkwatch module: run vkperf from the checkout, or pass --vkwatch")
	}
	bin := filepath.Join(dir, "vkwatch")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/vkwatch")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/vkwatch: %w\n%s", err, out)
	}
	return bin, nil
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
