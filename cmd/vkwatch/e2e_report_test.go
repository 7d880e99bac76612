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
	"regexp"
	"slices"
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
	"github.com/redis/go-redis/v9"

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
	// Each figure as PNG too: minutes of CPU for a -race binary on a
	// machine at load 40 (seen: still encoding PNGs after a minute).
	code, _, stderr = runVKWatch(t, 4*time.Minute, "report", rec, benchOut, "-o", page, "--figures", figs)
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

	checkBenchSaves(t, res, bj)
	checkBenchSummary(t, res, bj)
	checkBenchVerdict(t, stdout, page)

	// At 1,400 px with a scroll bar, nothing is wider than the window
	// and the figures go two abreast; so too with names as long as a
	// cloud's hosts, which wrap where the tables run out of room.
	checkFits(t, page)
	long := strings.NewReplacer(addrs[0], "valkey-cache-primary-0001.a1b2c3.use1.cache.example.com:6379",
		addrs[1], "valkey-cache-primary-0002.a1b2c3.use1.cache.example.com:6379")
	for _, p := range []string{rec, benchOut} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".long", []byte(long.Replace(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	longPage := filepath.Join(dir, "long.html")
	if code, _, stderr := runVKWatch(t, 2*time.Minute, "report", rec+".long", benchOut+".long", "-o", longPage); code != 0 {
		t.Fatalf("report with long names: exit %d\n%s", code, stderr)
	}
	checkFits(t, longPage)
}

// checkBenchSaves checks the table of every save against bench --json:
// one row per run, servers in order, runs in order, each save's
// copy-on-write the rdb_last_cow_size bench read from the server after the
// run, its duration the bench's.
func checkBenchSaves(t *testing.T, res chromiumResult, bj benchJSON) {
	t.Helper()
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
	saves := res.list("saves")
	if len(saves) != len(want) || len(want) != 4 {
		t.Fatalf("the page shows %d saves, bench ran %d (want 4)", len(saves), len(want))
	}
	for i, w := range want {
		got := saves[i]
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
}

// checkBenchSummary checks the page's summary of a bench and its
// recording against bench --json: the seed's table, a column per server,
// has bench's means of copy-on-write, memory delta and save time; each
// server's worst copy-on-write is the largest rdb_last_cow_size bench read
// after its runs; the sentences compare the two servers.
func checkBenchSummary(t *testing.T, res chromiumResult, bj benchJSON) {
	t.Helper()
	seeds := res.rows("seeds")
	for i, s := range bj.Servers {
		col := strconv.Itoa(i)
		for measure, st := range map[string]*struct{ Mean, Min, Max float64 }{"cow": s.COW, "mem-delta": s.MemDelta, "save-time": s.SaveTime} {
			if st == nil {
				t.Fatalf("server %s: bench has no %s", s.Addr, measure)
			}
			got, err := strconv.ParseFloat(seeds[measure][col].v, 64)
			if err != nil || got != st.Mean {
				t.Errorf("server %s, %s: mean %q on the page, bench's %v", s.Addr, measure, seeds[measure][col].v, st.Mean)
			}
		}
	}
	summary := res.rows("summary")
	for _, s := range bj.Servers {
		var most int64
		for _, r := range s.Runs {
			most = max(most, r.ServerCOW)
		}
		if got := summary[s.Addr]["cow"].v; got != strconv.FormatInt(most, 10) {
			t.Errorf("summary of %s: worst copy-on-write %q, the largest rdb_last_cow_size %d", s.Addr, got, most)
		}
	}
	if !strings.Contains(res.story, "against") || len(res.stories) != 2 {
		t.Errorf("the summary's sentences (%d paragraphs) do not compare the two servers: %q", len(res.stories), res.story)
	}
	// The recording's summary names each server once (bench's recording
	// named its servers without their node ids: a third, empty, showed).
	if n := len(res.tables["summary"]); n != len(bj.Servers) {
		t.Errorf("the recording's summary has %d rows for %d servers", n, len(bj.Servers))
	}
}

// shown is a table cell as the browser has it: its exact value (data-v)
// and its text.
type shown struct{ v, text string }

// tableRow is a row of a table as the browser has it: its key (the
// data-server, data-measure or data-save of the row) and its cells by
// data-col.
type tableRow struct {
	key   string
	cells map[string]shown
}

type chromiumResult struct {
	url      string
	requests []string
	messages []string
	shot     []byte
	tables   map[string][]tableRow // by the table's class
	stories  []string              // the summary's paragraphs
	story    string                // all of them
	figures  []string              // data-figure of every figure, in order
	costNote string
	// storyFirst: the summary's sentences come before every figure.
	storyFirst bool
	pdf        []byte // the page printed, as its CSS asks (A4 landscape)
}

// list is the rows of the table of class name, in order.
func (r chromiumResult) list(name string) []map[string]shown {
	var out []map[string]shown
	for _, row := range r.tables[name] {
		out = append(out, row.cells)
	}
	return out
}

// rows is the rows of the table of class name by their key.
func (r chromiumResult) rows(name string) map[string]map[string]shown {
	out := map[string]map[string]shown{}
	for _, row := range r.tables[name] {
		out[row.key] = row.cells
	}
	return out
}

// pageRead is what readPage returns from the browser's DOM.
type pageRead struct {
	Tables     map[string][][]any `json:"tables"` // class -> rows: [key, [[col, v, text]...]]
	Stories    []string           `json:"stories"`
	Figures    []string           `json:"figures"`
	CostNote   string             `json:"costNote"`
	StoryFirst bool               `json:"storyFirst"`
}

const readPage = `(() => {
	const tables = {};
	for (const name of ['saves', 'seeds', 'summary', 'runs']) {
		tables[name] = [...document.querySelectorAll('table.' + name + ' tbody tr')].map(tr =>
			[tr.dataset.server || tr.dataset.measure || tr.dataset.save || '',
			 [...tr.querySelectorAll('td[data-col]')].map(td => [td.dataset.col, td.dataset.v, td.textContent])]);
	}
	const note = document.getElementById('cost-note');
	const story = document.querySelector('p.story'), fig = document.querySelector('figure');
	return {
		storyFirst: !!story && (!fig || !!(story.compareDocumentPosition(fig) & Node.DOCUMENT_POSITION_FOLLOWING)),
		tables: tables,
		stories: [...document.querySelectorAll('p.story')].map(p => p.textContent),
		figures: [...document.querySelectorAll('figure[data-figure]')].map(f => f.dataset.figure),
		costNote: note ? note.textContent : '',
	};
})()`

// openInChromium loads page in a headless Chromium through the DevTools
// protocol, which reports every request the page makes and every console
// message, log entry and exception, and reads the tables, the summary and
// the figures back from the DOM the browser built.
func openInChromium(t *testing.T, page string) chromiumResult {
	t.Helper()
	res := chromiumResult{url: "file://" + page}
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
	tctx, stop := newChromium(t, 1400, 2000, chromedp.WithListener(listen))
	defer stop()
	if err := chromedp.Do(tctx, chromedp.Navigate(res.url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	read, err := chromedp.Run(tctx, chromedp.Evaluate[pageRead](readPage))
	if err != nil {
		t.Fatalf("chromium: reading the page: %v", err)
	}
	if res.shot, err = chromedp.Run(tctx, chromedp.FullScreenshot(100)); err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	if res.pdf, err = chromedp.Run(tctx, chromedp.PrintToPDF(chromedp.PDFPreferCSSPageSize())); err != nil {
		t.Fatalf("chromium: print: %v", err)
	}
	res.tables, res.storyFirst = tablesOf(read.Tables), read.StoryFirst
	res.stories, res.figures, res.costNote = read.Stories, read.Figures, read.CostNote
	res.story = strings.Join(read.Stories, "\n")
	mu.Lock()
	defer mu.Unlock()
	res.requests = append([]string(nil), res.requests...)
	res.messages = append([]string(nil), res.messages...)
	return res
}

// newChromium starts a headless Chromium with a window w x h pixels and
// returns a tab's context, which ends within a minute, and stop, which
// ends the browser. Its scroll bars are hidden unless extra shows them.
func newChromium(t *testing.T, w, h int, tab chromedp.ContextOption, extra ...chromedp.ExecAllocatorOption) (ctx context.Context, stop func()) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("chromium"),
		chromedp.NoSandbox, // tests run as root, where Chromium's sandbox will not start
		chromedp.DisableGPU,
		chromedp.WindowSize(w, h),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	var tabs []chromedp.ContextOption
	if tab != nil {
		tabs = append(tabs, tab)
	}
	bctx, cancel := chromedp.NewContext(actx, tabs...)
	// The first Run starts the browser; its context must outlive the test's
	// steps, which the timeout bounds.
	if err := chromedp.Do(bctx); err != nil {
		cancel()
		cancelA()
		t.Fatalf("chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(bctx, 60*time.Second)
	return ctx, func() { cancelT(); cancel(); cancelA() }
}

// tablesOf turns the rows readPage returns into tableRows.
func tablesOf(in map[string][][]any) map[string][]tableRow {
	out := map[string][]tableRow{}
	for name, rows := range in {
		for _, r := range rows {
			key, _ := r[0].(string)
			row := tableRow{key: key, cells: map[string]shown{}}
			cells, _ := r[1].([]any)
			for _, c := range cells {
				f, _ := c.([]any)
				if len(f) != 3 {
					continue
				}
				col, _ := f[0].(string)
				v, _ := f[1].(string)
				text, _ := f[2].(string)
				row.cells[col] = shown{v, text}
			}
			out[name] = append(out[name], row)
		}
	}
	return out
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
		{"not a recording", write("notes.txt", []byte("hello, this is a shopping list\n")), "notes.txt: neither a vkwatch recording (--record), save reports (--report) nor bench --json output: first line is not a JSON header"},
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

// TestReportOfRealForkSave: vkwatch save on a real server under writes,
// recorded, and the report of its recording opened in a real headless
// Chromium. The summary's numbers are the server's own, read from it after
// the save: its copy-on-write is rdb_last_cow_size, its fork pause
// latest_fork_usec, and the table of saves has rdb_last_bgsave_time_sec;
// the sentences say them; the save has a cost curve or the page says why
// not.
func TestReportOfRealForkSave(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("this test needs Debian's chromium (.ci/run installs it): ", err)
	}
	// 30,000 keys at 100 µs each: a save of about 3 s, a few progress
	// reports (the child reports about once a second).
	srv, c := servertest.StartSlowSave(t, 30000, 200, 100)
	rec := filepath.Join(t.TempDir(), "save.jsonl")
	stop := make(chan struct{})
	wrote := make(chan int)
	go func() { wrote <- overwrite(c, 30000, stop) }()
	code, _, stderr := runVKWatch(t, 2*time.Minute, "save", srv.Addr, "--record", rec, "--interval", "100ms")
	close(stop)
	if n := <-wrote; n == 0 {
		t.Fatal("the writer wrote nothing during the save: no copy-on-write to check")
	}
	if code != 0 {
		t.Fatalf("save: exit %d\n%s", code, stderr)
	}
	cow := servertest.InfoInt(t, c, "persistence", "rdb_last_cow_size")
	secs := servertest.InfoInt(t, c, "persistence", "rdb_last_bgsave_time_sec")
	forkUS := servertest.InfoInt(t, c, "stats", "latest_fork_usec")
	if cow <= 0 || forkUS <= 0 {
		t.Fatalf("rdb_last_cow_size %d, latest_fork_usec %d: nothing to check", cow, forkUS)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := runVKWatch(t, time.Minute, "report", rec, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	res := openInChromium(t, page)
	for _, m := range res.messages {
		t.Errorf("console: %s", m)
	}
	row := res.rows("summary")[srv.Addr]
	if row == nil {
		t.Fatalf("the summary has no row for %s: %v", srv.Addr, res.tables["summary"])
	}
	if got := row["cow"].v; got != strconv.FormatInt(cow, 10) {
		t.Errorf("summary: copy-on-write %q (%s), the server's rdb_last_cow_size %d", got, row["cow"].text, cow)
	}
	if v, err := strconv.ParseFloat(row["fork-pause"].v, 64); err != nil || math.Round(v*1000) != float64(forkUS) {
		t.Errorf("summary: fork pause %q ms (%s), the server's latest_fork_usec %d", row["fork-pause"].v, row["fork-pause"].text, forkUS)
	}
	saves := res.list("saves")
	if len(saves) != 1 || saves[0]["server-s"].v != strconv.FormatInt(secs, 10) {
		t.Errorf("table of saves: %v; want one save that took rdb_last_bgsave_time_sec %d", saves, secs)
	}
	cowText, _, _ := strings.Cut(row["cow"].text, "#")
	pauseText, _, _ := strings.Cut(row["fork-pause"].text, "#")
	for _, want := range []string{"saw 1 save end: BGSAVE fork, ok.", "copied on write was " + cowText, "for at most " + pauseText} {
		if !strings.Contains(res.story, want) {
			t.Errorf("the summary's sentences do not say %q: %q", want, res.story)
		}
	}
	if !res.storyFirst {
		t.Error("the page does not lead with its summary: a figure comes before the sentences")
	}
	checkA4(t, res.pdf)
	hasCurve := slices.Contains(res.figures, "cost-cow")
	if hasCurve == strings.Contains(res.costNote, "#1") {
		t.Errorf("cost curve drawn %v, note %q: the save has a curve or the note says why not", hasCurve, res.costNote)
	}
}

// checkA4: every page of a printed report is A4 landscape (297 x 210 mm:
// 841.9 x 595.3 points; Chromium rounds to its pixels), and there are some.
func checkA4(t *testing.T, pdf []byte) {
	t.Helper()
	boxes := regexp.MustCompile(`/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]`).FindAllSubmatch(pdf, -1)
	if len(boxes) == 0 {
		t.Fatalf("the printed page (%d bytes of PDF) has no page", len(pdf))
	}
	for _, b := range boxes {
		w, _ := strconv.ParseFloat(string(b[1]), 64)
		h, _ := strconv.ParseFloat(string(b[2]), 64)
		if math.Abs(w-841.9) > 2 || math.Abs(h-595.3) > 2 {
			t.Errorf("a printed page is %.1f x %.1f points, not A4 landscape", w, h)
		}
	}
}

// overwrite SETs the keys key:0 .. key:n-1 of c over and over until stop
// is closed, and returns how many it wrote: writes during a save are what
// copy-on-write costs.
func overwrite(c *redis.Client, n int, stop <-chan struct{}) int {
	ctx := context.Background()
	wrote := 0
	for i := 0; ; i = (i + 1) % n {
		select {
		case <-stop:
			return wrote
		default:
		}
		if c.Set(ctx, "key:"+strconv.Itoa(i), "v"+strconv.Itoa(wrote), 0).Err() == nil {
			wrote++
		}
	}
}
