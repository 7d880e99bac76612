// Command vkshot makes the README's pictures from the real thing: it builds
// ./cmd/vkwatch, runs `vkwatch demo` (small and short) in a pseudo-terminal
// whose output feeds a terminal emulator that keeps colours, waits for what
// the screen shows, presses B, and renders the screen to SVG three times:
// before the save, during it, and once the last-save block is filled.
//
//	go run ./cmd/vkshot                 # writes .media/before.svg, during.svg, after.svg
//	go run ./cmd/vkshot --out /tmp/pics # elsewhere (CI)
//	go run ./cmd/vkshot --report        # .media/report/: the report page (see report.go)
//
// It never waits for a fixed time: each picture is taken when a few stable
// words show on the screen (--ready, --during, --after; regular
// expressions, matched against the screen's text, each at least --panes
// times: once per pane) and, before the save, when the charts have drawn
// some history (--ready-chart-cells), so a new layout needs no change
// here as long as those words stay. demo.tape records the same session
// for VHS.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/cmd/internal/gobuild"
	screenshot "github.com/vkwatch/vkwatch/ui/shot"
)

// config is what the command line says.
type config struct {
	out       string
	vkwatch   string
	keys      int
	saveDelay int
	history   string
	cols      int
	rows      int
	panes     int
	ready     string
	readyDraw int
	during    string
	duringPct float64
	after     string
	timeout   time.Duration
	// report: the pictures of vkwatch report instead (runReport).
	report bool
	rc     reportConfig
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if err != nil {
		os.Exit(2) // the flag package has said why
	}
	if c.report {
		err = runReport(c, c.rc)
	} else {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkshot:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line; with no arguments, the defaults,
// which are the session demo.tape records.
func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("vkshot", flag.ContinueOnError)
	fs.StringVar(&c.out, "out", ".media", "directory the pictures are written to")
	fs.StringVar(&c.vkwatch, "vkwatch", "", "vkwatch binary to run (default: build ./cmd/vkwatch of this checkout)")
	fs.IntVar(&c.keys, "keys", 100000, "keys of the demo's dataset on each server")
	fs.IntVar(&c.saveDelay, "save-delay", 15, "the demo's --save-delay (µs per key), so that the save lasts a few seconds")
	fs.StringVar(&c.history, "history", "30s", "the demo's --history, so that the charts fill within the session")
	fs.IntVar(&c.cols, "cols", 160, "terminal columns")
	fs.IntVar(&c.rows, "rows", 40, "terminal rows")
	fs.IntVar(&c.panes, "panes", 2, "how often each marker must match: once per pane")
	fs.StringVar(&c.ready, "ready", `p50\s+\d`, "marker of the screen before the save: both panes have PING figures")
	fs.IntVar(&c.readyDraw, "ready-chart-cells", 250, "and the charts have drawn at least this many cells (block and braille characters), so that the picture before the save has some history")
	fs.StringVar(&c.during, "during", `progress\s+(\d+(?:\.\d+)?)%\s`, "marker of the save in progress; its first group is the percentage done")
	fs.Float64Var(&c.duringPct, "during-pct", 30, "take the picture during the save once every pane's percentage is at least this")
	fs.StringVar(&c.after, "after", `last save (?:BGSAVE|BGREWRITEAOF)[^\n]*?\b(?:ok|err)\b`, "marker of a filled last-save block")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "how long each marker may take to show")
	fs.BoolVar(&c.report, "report", false, "make the pictures of vkwatch report instead: a real bench on two servers, its report at 1400 px and printed on A4, into OUT/report")
	fs.IntVar(&c.rc.keys, "report-keys", 50000, "with --report: keys of each server's dataset")
	fs.IntVar(&c.rc.saveDelay, "report-save-delay", 20, "with --report: rdb-key-save-delay (µs per key), so that a save lasts seconds")
	fs.IntVar(&c.rc.runs, "report-runs", 2, "with --report: bench runs per server")
	fs.DurationVar(&c.rc.window, "report-window", 5*time.Second, "with --report: each run's window")
	fs.IntVar(&c.rc.width, "report-width", 1400, "with --report: the browser's width, pixels")
	fs.IntVar(&c.rc.dpi, "report-dpi", 72, "with --report: the printed pages' resolution")
	err := fs.Parse(args)
	return c, err
}

// marker is a regular expression that must match the screen's text at
// least min times; with a group, every match's first group, a number,
// must be at least atLeast; and the screen must show at least cells
// chart cells.
type marker struct {
	name    string
	re      *regexp.Regexp
	min     int
	atLeast float64
	cells   int
}

// chartCells counts the characters charts draw with: block elements
// (sparklines, bars) and braille (line charts). However a chart is laid
// out, it draws more of them as its history grows.
func chartCells(text string) int {
	n := 0
	for _, r := range text {
		if r >= 0x2580 && r <= 0x259f || r >= 0x2801 && r <= 0x28ff {
			n++
		}
	}
	return n
}

func (m marker) holds(sc screen) bool {
	if m.cells > 0 && chartCells(sc.Text) < m.cells {
		return false
	}
	found := m.re.FindAllStringSubmatch(sc.Text, -1)
	if len(found) < m.min {
		return false
	}
	if m.re.NumSubexp() > 0 {
		for _, f := range found {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil || v < m.atLeast {
				return false
			}
		}
	}
	return true
}

// shot is one picture: when to take it, and what to press first.
type shot struct {
	file  string
	press string
	when  marker
}

func (c config) shots() ([]shot, error) {
	var ms []marker
	for _, m := range []struct {
		name, expr string
		atLeast    float64
		cells      int
	}{{"ready", c.ready, 0, c.readyDraw}, {"during", c.during, c.duringPct, 0}, {"after", c.after, 0, 0}} {
		re, err := regexp.Compile(m.expr)
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", m.name, err)
		}
		ms = append(ms, marker{name: m.name, re: re, min: c.panes, atLeast: m.atLeast, cells: m.cells})
	}
	return []shot{
		{file: "before.svg", when: ms[0]},
		{file: "during.svg", press: "B", when: ms[1]},
		{file: "after.svg", when: ms[2]},
	}, nil
}

func run(c config) error {
	shots, err := c.shots()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	bin := c.vkwatch
	if bin == "" {
		dir, err := os.MkdirTemp("", "vkshot-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if bin, err = buildVKWatch(dir); err != nil {
			return err
		}
	}
	args := c.demoArgs()
	fmt.Fprintf(os.Stderr, "vkshot: vkwatch %s in a %dx%d terminal\n", strings.Join(args, " "), c.cols, c.rows)
	s, err := start(append([]string{bin}, args...), os.Environ(), c.cols, c.rows)
	if err != nil {
		return err
	}
	defer s.close()
	title := "vkwatch " + strings.Join(args, " ")
	for _, sh := range shots {
		if sh.press != "" {
			if err := s.press(sh.press); err != nil {
				return err
			}
		}
		sc, err := s.waitFor(c.timeout, sh.when.holds)
		if err != nil {
			return fmt.Errorf("%s: waiting for %q (x%d, %d chart cells): %v\nscreen (%d chart cells):\n%s",
				sh.file, sh.when.re, sh.when.min, sh.when.cells, err, chartCells(sc.Text), sc.Text)
		}
		path := filepath.Join(c.out, sh.file)
		if err := os.WriteFile(path, screenshot.SVG(sc, title), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "vkshot: %s\n", path)
	}
	if err := s.press("q"); err != nil {
		return err
	}
	code, err := s.wait(30 * time.Second)
	if err != nil {
		return fmt.Errorf("after q: %v", err)
	}
	if code != 0 {
		return fmt.Errorf("vkwatch exited with status %d after q", code)
	}
	return nil
}

// demoArgs is the session the pictures show; demo.tape types the same.
func (c config) demoArgs() []string {
	return []string{"demo", "--keys", strconv.Itoa(c.keys), "--save-delay", strconv.Itoa(c.saveDelay), "--history", c.history}
}

// buildVKWatch builds ./cmd/vkwatch of the module vkshot runs in.
func buildVKWatch(dir string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return gobuild.VKWatch(ctx, dir, "vkshot")
}
