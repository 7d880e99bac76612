//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// benchJSON is the part of bench --json the report test checks against.
type benchJSON struct {
	Servers []struct {
		Addr string `json:"addr"`
		Runs []struct {
			ServerCOW   int64   `json:"server_cow_bytes"`
			COW         *int64  `json:"cow_bytes"`
			SaveSeconds float64 `json:"save_seconds_observed"`
		} `json:"runs"`
		COW      *struct{ Mean, Min, Max float64 } `json:"cow_bytes"`
		MemDelta *struct{ Mean, Min, Max float64 } `json:"mem_delta_bytes"`
		SaveTime *struct{ Mean, Min, Max float64 } `json:"save_seconds"`
	} `json:"servers"`
}

// runVKWatch runs the binary to its end without a terminal and returns
// its exit status, stdout and stderr.
func runVKWatch(t *testing.T, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, vkwatchBin, args...)
	cmd.Env = childEnv()
	// Out of time, the child is asked for its goroutines (Go's SIGQUIT
	// dump goes to stderr) before it is killed: a hang names itself.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("vkwatch %s did not end within %s; its stderr:\n%s", strings.Join(args, " "), timeout, errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("vkwatch %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// TestReportOfRealBench: a real bench on two real servers, recorded, and
// the report of its recording and its --json, opened by a real headless
// Chromium from file://: no console message, no request but the page, a
// screenshot that is not blank, and the numbers the browser shows are the
// servers' own: each save's copy-on-write is the rdb_last_cow_size bench
// read from the server after the run, its duration the bench's, and the
// seeds' table's means are the bench's.
func TestReportOfRealBench(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("this test needs Debian's chromium (.ci/run installs it): ", err)
	}
	var addrs []string
	for range 2 {
		// 50 µs a key: 20,000 keys save in about a second, long enough for
		// a few samples to see the save's progress.
		srv := servertest.Start(t, server.Options{Args: []string{"--save", "", "--rdb-key-save-delay", "50"}})
		addrs = append(addrs, srv.Addr)
	}
	dir := t.TempDir()
	rec, benchOut := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.json")
	code, stdout, stderr := runVKWatch(t, 3*time.Minute, "bench", addrs[0], addrs[1], "--preload", "20000", "--keys", "20000",
		"--runs", "2", "--window", "3s", "--trigger-at", "500ms", "--writers", "2", "--record", rec, "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(benchOut, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	var bj benchJSON
	if err := json.Unmarshal([]byte(stdout), &bj); err != nil {
		t.Fatalf("bench --json: %v", err)
	}
	page := filepath.Join(dir, "report.html")
	figs := filepath.Join(dir, "figs")
	code, _, stderr = runVKWatch(t, time.Minute, "report", rec, benchOut, "-o", page, "--figures", figs)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	for _, f := range []string{"cost-cow.svg", "cost-cow.png", "cost-footprint.svg"} {
		if st, err := os.Stat(filepath.Join(figs, f)); err != nil || st.Size() == 0 {
			t.Errorf("--figures: %s: %v", f, err)
		}
	}

	res := openInChromium(t, page)
	for _, m := range res.messages {
		t.Errorf("console: %s", m)
	}
	for _, u := range res.requests {
		if u != res.url {
			t.Errorf("the page requested %s; it may request nothing but itself", u)
		}
	}
	if len(res.requests) == 0 {
		t.Errorf("no request seen at all: the listener missed the page itself")
	}
	if share := inkShare(t, res.shot); share < 0.02 {
		t.Errorf("screenshot: %.4f of its pixels are not white; want a drawn page", share)
	}
	if p := os.Getenv("VKWATCH_REPORT_SHOT"); p != "" {
		os.WriteFile(p, res.shot, 0o644)
	}

	// The saves' table: one row per run, servers in order, runs in order.
	var want []struct {
		cow int64
		dur float64
	}
	for _, s := range bj.Servers {
		for _, r := range s.Runs {
			want = append(want, struct {
				cow int64
				dur float64
			}{r.ServerCOW, r.SaveSeconds})
		}
	}
	if len(res.saves) != len(want) || len(want) != 4 {
		t.Fatalf("the page shows %d saves, bench ran %d (want 4)", len(res.saves), len(want))
	}
	for i, w := range want {
		got := res.saves[i]
		if got["cow"].v != strconv.FormatInt(w.cow, 10) {
			t.Errorf("save %d: copy-on-write %q on the page, the server's rdb_last_cow_size %d", i+1, got["cow"].v, w.cow)
		}
		if w.cow <= 0 {
			t.Errorf("save %d: rdb_last_cow_size %d: the writers made no copy-on-write to check", i+1, w.cow)
		}
		if d, err := strconv.ParseFloat(got["duration"].v, 64); err != nil || d != w.dur {
			t.Errorf("save %d: duration %q on the page, bench's %v", i+1, got["duration"].v, w.dur)
		}
		if !strings.HasSuffix(got["cow"].text, "iB") || !strings.HasSuffix(got["duration"].text, " s") {
			t.Errorf("save %d: shown as %q and %q", i+1, got["cow"].text, got["duration"].text)
		}
	}
	// The seeds' table: the means of copy-on-write (0), memory delta (1)
	// and save time (2) are bench's.
	if len(res.seeds) != 2 {
		t.Fatalf("seeds' table rows %d, want 2", len(res.seeds))
	}
	for i, s := range bj.Servers {
		for col, st := range map[string]*struct{ Mean, Min, Max float64 }{"0": s.COW, "1": s.MemDelta, "2": s.SaveTime} {
			if st == nil {
				t.Fatalf("server %s: bench has no %s column", s.Addr, col)
			}
			got, err := strconv.ParseFloat(res.seeds[i][col+"-mean"].v, 64)
			if err != nil || got != st.Mean {
				t.Errorf("server %s column %s: mean %q on the page, bench's %v", s.Addr, col, res.seeds[i][col+"-mean"].v, st.Mean)
			}
		}
	}
}

// shown is a table cell as the browser has it.
type shown struct{ v, text string }

type chromiumResult struct {
	url      string
	requests []string
	messages []string
	shot     []byte
	saves    []map[string]shown // data-col -> cell, per row of the saves' table
	seeds    []map[string]shown // per row of the seeds' table
}

// openInChromium loads page in a headless Chromium through the DevTools
// protocol, which reports every request the page makes and every console
// message, log entry and exception, and reads the tables back from the
// DOM the browser built.
func openInChromium(t *testing.T, page string) chromiumResult {
	t.Helper()
	res := chromiumResult{url: "file://" + page}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("chromium"),
		chromedp.NoSandbox, // tests run as root, where Chromium's sandbox will not start
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 2000),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	var mu sync.Mutex
	// The listener is there from the tab's first message, before the page
	// loads: chromedp enables the runtime, log and network domains itself.
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			res.requests = append(res.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			res.messages = append(res.messages, fmt.Sprintf("console.%s %v", e.Type, e.Args))
		case *runtime.EventExceptionThrown:
			res.messages = append(res.messages, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			res.messages = append(res.messages, fmt.Sprintf("log %s %s: %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer cancel()
	// The first Run starts the browser; its context must outlive the test's
	// steps, which the timeout bounds.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	tctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	type tables struct {
		Saves [][][3]string `json:"saves"`
		Seeds [][][3]string `json:"seeds"`
	}
	const readTables = `(() => {
		const rows = sel => [...document.querySelectorAll(sel)].map(tr =>
			[...tr.querySelectorAll('td[data-col]')].map(td => [td.dataset.col, td.dataset.v, td.textContent]));
		return {saves: rows('table.saves tbody tr'), seeds: rows('table.seeds tbody tr')};
	})()`
	if err := chromedp.Do(tctx, chromedp.Navigate(res.url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	rows, err := chromedp.Run(tctx, chromedp.Evaluate[tables](readTables))
	if err != nil {
		t.Fatalf("chromium: reading the tables: %v", err)
	}
	if res.shot, err = chromedp.Run(tctx, chromedp.FullScreenshot(100)); err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	cells := func(in [][][3]string) []map[string]shown {
		var out []map[string]shown
		for _, r := range in {
			m := map[string]shown{}
			for _, c := range r {
				m[c[0]] = shown{c[1], c[2]}
			}
			out = append(out, m)
		}
		return out
	}
	res.saves, res.seeds = cells(rows.Saves), cells(rows.Seeds)
	mu.Lock()
	defer mu.Unlock()
	res.requests = append([]string(nil), res.requests...)
	res.messages = append([]string(nil), res.messages...)
	return res
}

// inkShare is the share of a PNG's pixels that are not near white.
func inkShare(t *testing.T, shot []byte) float64 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 800 || b.Dy() < 800 {
		t.Fatalf("screenshot %v: too small for the page", b)
	}
	ink, all := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if math.Min(float64(r), math.Min(float64(g), float64(bl))) < 0xE000 {
				ink++
			}
			all++
		}
	}
	return float64(ink) / float64(all)
}

// TestReportBadInput: a file that is not a recording, an empty one, a
// recording cut short and bench output cut short are each one line on
// stderr and exit status 2, and the page is never written: neither
// created, nor an existing one changed.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join("..", "..", "source", "record", "testdata", "two-saves.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cut := bytes.LastIndexByte(good[:len(good)-1], '\n') + 20
	files := []struct{ name, path, says string }{
		{"not a recording", write("notes.txt", []byte("hello, this is a shopping list\n")), "notes.txt: neither a vkwatch recording nor bench --json output: first line is not a JSON header"},
		{"empty", write("empty.jsonl", nil), "empty file"},
		{"recording cut short", write("cut.jsonl", good[:cut]), "recording cut short"},
		{"bench cut short", write("cut.json", []byte(`{"servers": [{"server": 0, "addr": "127.0.0.1:1", "runs": [`)), "bench output cut short"},
		{"missing", filepath.Join(dir, "nope.jsonl"), "no such file"},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			page := filepath.Join(dir, "new.html")
			code, _, stderr := runVKWatch(t, 30*time.Second, "report", filepath.Join("..", "..", "source", "record", "testdata", "two-saves.jsonl"), f.path, "-o", page)
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "vkwatch: ") || !strings.Contains(lines[0], f.says) {
				t.Errorf("exit %d, stderr %q; want %d and one line saying %q", code, stderr, exitUsage, f.says)
			}
			if _, err := os.Stat(page); !os.IsNotExist(err) {
				t.Errorf("the page was written after bad input (stat: %v)", err)
			}
			old := write("old.html", []byte("the user's page"))
			runVKWatch(t, 30*time.Second, "report", f.path, "-o", old)
			if b, _ := os.ReadFile(old); string(b) != "the user's page" {
				t.Errorf("an existing page was changed after bad input: %q", b)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
	// And a good one, cut short, is reported with --allow-truncated.
	page := filepath.Join(dir, "partial.html")
	code, _, stderr := runVKWatch(t, 30*time.Second, "report", filepath.Join(dir, "cut.jsonl"), "--allow-truncated", "-o", page)
	if code != 0 {
		t.Errorf("--allow-truncated: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(page); err != nil {
		t.Errorf("--allow-truncated wrote no page: %v", err)
	}
}
