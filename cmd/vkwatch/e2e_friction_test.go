//go:build linux

package main

// The first hour of a newcomer, each step on the real binary: --report's
// file drawn by report, a page named after its input, a page that fits
// 1,400 px in a real Chromium, load's progress in a file, a password
// given to a server that has none, the flags each command lists, -n's
// default, and what a cut of a recording says it wrote.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// layout is how a page lays out in a real Chromium window 1,400 px wide
// with its scroll bar showing (15 px of the width), as a user sees it.
type layout struct {
	ScrollWidth int    `json:"scrollWidth"` // the page's width; above ClientWidth: a horizontal scroll bar
	ClientWidth int    `json:"clientWidth"` // the window less its vertical scroll bar
	Widest      int    `json:"widest"`      // the right edge of the element reaching furthest right
	WidestIs    string `json:"widestIs"`
	// Rows are, per row of figures, how many figures and how many
	// columns they are laid out in.
	Rows [][2]int `json:"rows"`
}

const readLayout = `(() => {
	const de = document.documentElement;
	let widest = 0, is = '';
	for (const el of document.querySelectorAll('body *')) {
		const r = el.getBoundingClientRect();
		if (r.right > widest) { widest = r.right; is = el.tagName.toLowerCase() + (el.className ? '.' + el.className : ''); }
	}
	const rows = [...document.querySelectorAll('.row')].map(row => {
		const lefts = new Set([...row.children].map(c => Math.round(c.getBoundingClientRect().left)));
		return [row.children.length, lefts.size];
	});
	return {scrollWidth: de.scrollWidth, clientWidth: de.clientWidth, widest: Math.ceil(widest), widestIs: is, rows: rows};
})()`

// pageLayout opens page in a headless Chromium 1,400 px wide that shows
// its scroll bars (chromedp hides them by default) and reads its layout.
// With VKWATCH_LAYOUT_SHOT set, the window's screenshot goes there.
func pageLayout(t *testing.T, page string) layout {
	t.Helper()
	tctx, stop := newChromium(t, 1400, 900, nil, chromedp.Flag("hide-scrollbars", false))
	defer stop()
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	l, err := chromedp.Run(tctx, chromedp.Evaluate[layout](readLayout))
	if err != nil {
		t.Fatalf("chromium: reading the layout: %v", err)
	}
	if p := os.Getenv("VKWATCH_LAYOUT_SHOT"); p != "" {
		if shot, err := chromedp.Run(tctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(p, shot, 0o644)
		}
	}
	return l
}

// checkFits: the page has no horizontal scroll bar at 1,400 px with its
// vertical one showing, nothing on it reaches past the window, and every
// row of two figures or more lays them two or more abreast.
func checkFits(t *testing.T, page string) {
	t.Helper()
	l := pageLayout(t, page)
	if l.ClientWidth >= 1400 {
		t.Errorf("the window is %d px wide inside: no vertical scroll bar showing, not the case to check", l.ClientWidth)
	}
	if l.ScrollWidth > l.ClientWidth || l.Widest > l.ClientWidth || l.Widest > 1400 {
		t.Errorf("%s is %d px wide, its widest element (%s) reaches %d px, in a window of %d px",
			filepath.Base(page), l.ScrollWidth, l.WidestIs, l.Widest, l.ClientWidth)
	}
	for i, r := range l.Rows {
		if r[0] >= 2 && r[1] < 2 {
			t.Errorf("row %d of figures: %d figures stacked one per row", i+1, r[0])
		}
	}
}

// waitEvents waits until the recording at path holds an event that ok
// says it waits for: bounded by two minutes for a -race binary on a loaded
// machine (a second's save took over 15 s to show at load 50).
func waitEvents(t *testing.T, path, what string, ok func(source.Event) bool) {
	t.Helper()
	servertest.WaitFor(t, 2*time.Minute, what+" in the recording", func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		r, err := record.Read(f)
		return err == nil && slices.ContainsFunc(r.Events, ok)
	})
}

// TestReportOfSaveReports: the monitor's --report file is what report
// reads: vkwatch --report rep.json, then vkwatch report rep.json, with no
// -o, writes rep.html beside it and says so; the page's copy-on-write is
// the server's rdb_last_cow_size; a second run leaves that page as it is
// and says how to replace it (-o), which does; the page fits 1,400 px in
// a real Chromium.
func TestReportOfSaveReports(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Fatal("this test needs Debian's chromium (.ci/run installs it): ", err)
	}
	// Few keys, each of a slow save a millisecond: about 2 s. The count
	// of the save's sleeps decides how long a loaded machine takes, not
	// their length (20,000 keys at 50 µs did not end in 2 minutes at load 40).
	const keys = 2000
	srv, c := servertest.StartSlowSave(t, keys, 3000, 1000)
	dir := t.TempDir()
	rep, rec := filepath.Join(dir, "rep.json"), filepath.Join(dir, "rep.jsonl")
	h := startHeadless(t, "--headless", "--record", rec, "--report", rep, "--interval", "100ms", srv.Addr)
	waitEvents(t, rec, "a sample", func(ev source.Event) bool { return ev.Kind == source.EventSample })
	stop := make(chan struct{})
	wrote := make(chan int)
	go func() { wrote <- overwrite(c, keys, stop) }()
	if err := c.BgSave(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, rec, "the save's end", func(ev source.Event) bool { return ev.Report != nil })
	close(stop)
	if <-wrote == 0 {
		t.Fatal("nothing written during the save: no copy-on-write to check")
	}
	h.stop(t, "headless monitor")
	cow := servertest.InfoInt(t, c, "persistence", "rdb_last_cow_size")

	code, stdout, stderr := runVKWatch(t, time.Minute, "report", rep)
	page := filepath.Join(dir, "rep.html")
	if want := regexp.MustCompile(`^vkwatch: wrote ` + regexp.QuoteMeta(page) + ` \(\d+ KiB, 1 save\)\n$`); code != exitOK || stdout != "" || !want.MatchString(stderr) {
		t.Fatalf("report rep.json: exit %d, stdout %q, stderr %q; want 0 and one line naming %s", code, stdout, stderr, page)
	}
	res := openInChromium(t, page)
	for _, m := range res.messages {
		t.Errorf("console: %s", m)
	}
	if got := res.rows("summary")[srv.Addr]["cow"].v; got != strconv.FormatInt(cow, 10) {
		t.Errorf("the page's copy-on-write %q, the server's rdb_last_cow_size %d", got, cow)
	}
	if saves := res.list("saves"); len(saves) != 1 {
		t.Errorf("the page lists %d saves, --report held 1", len(saves))
	}
	if !strings.Contains(res.story, "The save reports (--report) hold 1 save on "+srv.Addr) {
		t.Errorf("the summary does not say whose saves the page shows: %q", res.story)
	}
	checkFits(t, page)

	// Again: the page is there, and stays as it is; -o replaces it.
	before, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runVKWatch(t, time.Minute, "report", rep)
	want := "vkwatch: " + page + " exists: report replaces a page only when -o names it (-o " + page + ")\n"
	if after, _ := os.ReadFile(page); code != exitUsage || stderr != want || string(after) != string(before) {
		t.Errorf("report rep.json over its page: exit %d, stderr %q, page kept %v; want %d, %q and the page kept", code, stderr, string(after) == string(before), exitUsage, want)
	}
	if code, _, stderr = runVKWatch(t, time.Minute, "report", rep, "-o", page); code != exitOK || !strings.HasPrefix(stderr, "vkwatch: wrote "+page+" ") {
		t.Errorf("report rep.json -o %s: exit %d, stderr %q", page, code, stderr)
	}
	// Files of different names make no page without -o: which would it be?
	other := filepath.Join(dir, "other.json")
	if err := os.Link(rep, other); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runVKWatch(t, time.Minute, "report", rep, other)
	if want := "vkwatch: " + rep + " and " + other + " would name different pages: name the page with -o PAGE.html\n"; code != exitUsage || stderr != want {
		t.Errorf("report of two names without -o: exit %d, stderr %q; want %d, %q", code, stderr, exitUsage, want)
	}
	// The recording beside it is named after itself: rep.jsonl -> rep.html
	// exists too, so it is refused, and written under -o.
	if code, _, _ := runVKWatch(t, time.Minute, "report", rec); code != exitUsage {
		t.Errorf("report rep.jsonl over rep.html: exit %d, want %d", code, exitUsage)
	}
}

// TestLoadProgressToAFile: vkwatch load with stderr in a file (2>file)
// writes plain lines there: no \r, no escape sequence, no bar; the
// preload says when it is done, the writers' rate comes as a line of its
// own (every 10 s), and SIGTERM ends it with what they did.
func TestLoadProgressToAFile(t *testing.T) {
	srv := servertest.StartDefault(t)
	h := startHeadless(t, "load", srv.Addr, "--keys", "20000", "--writers", "2")
	servertest.WaitFor(t, 30*time.Second, "a line of the writers' rate", func() bool {
		return strings.Contains(h.stderr.String(), " SET/s  total ")
	})
	h.stop(t, "load")
	out := h.stderr.String()
	if strings.ContainsAny(out, "\r\x1b") || strings.Contains(out, "█") {
		t.Errorf("load wrote a terminal's progress into a file: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	rate := regexp.MustCompile(`^\d+ SET/s  total \d+$`)
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `preloaded 20000 keys of 300 bytes under "vkwatch:" in `) ||
		lines[1] != "2 writers running against "+srv.Addr+"; ctrl+c to stop" || !rate.MatchString(lines[2]) ||
		!regexp.MustCompile(`^stopped after \d+ SETs \(0 errors\)$`).MatchString(lines[3]) {
		t.Errorf("stderr:\n%s\nwant the preload, the writers, one line of their rate and how they stopped", out)
	}
}

// TestPasswordToAServerWithoutOne: a password given to a server that asks
// for none connects, with valkey-cli's warning (its AUTH fails and says
// so), whether it came from -a or the environment; a server with that
// password gets no such warning; the password itself is printed nowhere.
func TestPasswordToAServerWithoutOne(t *testing.T) {
	const pass = "not-asked-for-7319"
	open := servertest.StartDefault(t)
	locked := servertest.Start(t, server.Options{Password: pass})
	authFailed := "Warning: " + open.Addr + ": AUTH failed: ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\n"
	for _, tt := range []struct {
		name       string
		env, args  []string
		warn, pass bool
	}{
		{"-a", nil, []string{"save", open.Addr, "-a", pass}, true, true},
		{"VALKEYCLI_AUTH", []string{"VALKEYCLI_AUTH=" + pass}, []string{"save", open.Addr}, true, false},
		{"the password the server asks for", []string{"VALKEYCLI_AUTH=" + pass}, []string{"save", locked.Addr}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, childEnv(tt.env...), tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if got := strings.Contains(errOut, authFailed); got != tt.warn {
				t.Errorf("AUTH failed warning %v, want %v; stderr %q", got, tt.warn, errOut)
			}
			if got := strings.Contains(errOut, passwordWarning); got != tt.pass {
				t.Errorf("the command-line password warning %v, want %v; stderr %q", got, tt.pass, errOut)
			}
			if strings.Contains(out+errOut, pass) {
				t.Errorf("the password shows: %s%s", out, errOut)
			}
		})
	}
}

// commandFlags are the flags each command lists in --help, by command: a
// flag a command cannot use is not among them (the demo starts its own two
// servers: no connection flags, --cluster, --max-parallel-saves or
// --read-only).
var commandFlags = map[string][]string{
	"": {"ascii", "askpass", "cacert", "cacertdir", "cert", "cluster", "connect-timeout", "db", "headless", "help", "history", "host",
		"idle-interval", "insecure", "interval", "key", "keys", "max-observer-cost", "max-parallel-saves", "metrics", "no-auth-warning",
		"nodes", "pass", "ping-interval", "port", "read-only", "record", "record-format", "report", "shard", "sni", "socket", "tls", "uri", "user",
		"value-size", "version", "writers"},
	"demo": {"ascii", "connect-timeout", "headless", "help", "history", "idle-interval", "interval", "keys", "metrics",
		"ping-interval", "record", "record-format", "report", "save-delay", "scenario", "server-bin", "value-size", "writers"},
	"save": {"askpass", "cacert", "cacertdir", "cert", "cluster", "connect-timeout", "db", "force", "help", "host", "insecure",
		"interval", "key", "max-parallel-saves", "no-auth-warning", "nodes", "pass", "port", "record", "report", "rolling", "sni",
		"socket", "tls", "uri", "user"},
	"load": {"askpass", "cacert", "cacertdir", "cert", "db", "help", "host", "insecure", "key", "keys", "no-auth-warning", "pass",
		"port", "prefix", "skip-preload", "sni", "socket", "tls", "uri", "user", "value-size", "writers"},
	"report":    {"allow-truncated", "figures", "help", "output"},
	"recording": {"from", "help", "margin", "output", "save", "to"},
	"replay":    {"ascii", "from", "help", "speed", "to"},
}

// TestCommandFlags: every command lists the flags it can use, and only
// those (checked on --help of the real binary against commandFlags); no
// help offers a default a user cannot read (-n's was -1); and a flag of
// another command given to one says which commands take it, never
// blaming a flag that was not given (vkwatch demo --cluster X blamed
// --writers).
func TestCommandFlags(t *testing.T) {
	long := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([\w-]+)`)
	for cmd, want := range commandFlags {
		args := []string{"--help"}
		if cmd != "" {
			args = []string{cmd, "--help"}
		}
		code, help, stderr := runVKWatch(t, 30*time.Second, args...)
		if code != exitOK {
			t.Fatalf("vkwatch %s: exit %d, %s", strings.Join(args, " "), code, stderr)
		}
		var got []string
		for _, m := range long.FindAllStringSubmatch(help[strings.Index(help, "Flags:"):], -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("vkwatch %s --help lists %v\nwant %v", cmd, got, want)
		}
		if strings.Contains(help, "(default -1)") {
			t.Errorf("vkwatch %s --help offers a default of -1", cmd)
		}
		if slices.Contains(want, "db") && !strings.Contains(help, "database number, as in valkey-cli (default: the URI's /db, else 0)") {
			t.Errorf("vkwatch %s --help does not say -n's default", cmd)
		}
	}
	for _, tt := range []struct{ args, want string }{
		{"demo --cluster 127.0.0.1:7000", "vkwatch: vkwatch demo takes no --cluster (the monitor, vkwatch bench and vkwatch save take it; see vkwatch demo --help)\n"},
		{"demo --max-parallel-saves 2", "vkwatch: vkwatch demo takes no --max-parallel-saves (the monitor and vkwatch save take it; see vkwatch demo --help)\n"},
		{"demo --read-only", "vkwatch: vkwatch demo takes no --read-only (the monitor takes it; see vkwatch demo --help)\n"},
		{"report r.jsonl --writers 2", "vkwatch: vkwatch report takes no --writers (the monitor, vkwatch bench, vkwatch demo and vkwatch load take it; see vkwatch report --help)\n"},
		{"--scenario idle-vs-load", "vkwatch: vkwatch takes no --scenario (vkwatch demo takes it; see vkwatch --help)\n"},
		{"save 127.0.0.1:1 -n -1", "vkwatch: -n -1: a database number is 0 or more\n"},
		{"recording r.jsonl --from +1s --margin 5s -o cut.jsonl", "vkwatch: --margin goes with --save N: --from and --to cut the window as given\n"},
		{"report", "vkwatch: report: name the files to draw: recordings (--record), save reports (--report) or bench --json output (see vkwatch report --help)\n"},
		{"replay", "vkwatch: replay reads one file, a recording made with --record (got 0; see vkwatch replay --help)\n"},
	} {
		code, _, stderr := runVKWatch(t, 30*time.Second, strings.Fields(tt.args)...)
		if code != exitUsage || stderr != tt.want {
			t.Errorf("vkwatch %s: exit %d, stderr %q; want %d, %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
}

// TestDBFlag: -n selects the database, as in valkey-cli; not given, the
// URI's /db stands, else 0 (what -1 meant before).
func TestDBFlag(t *testing.T) {
	srv := servertest.StartDefault(t)
	c := servertest.Client(t, srv)
	ctx := context.Background()
	for _, tt := range []struct {
		args []string
		db   int
	}{
		{[]string{srv.Addr}, 0},
		{[]string{"redis://" + srv.Addr + "/3"}, 3},
		{[]string{"redis://" + srv.Addr + "/3", "-n", "2"}, 2},
		{[]string{srv.Addr, "-n", "0"}, 0},
	} {
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"load", "--keys", "10", "--writers", "0"}, tt.args...)
		if code, out, errOut := runCLI(t, childEnv(), args...); code != exitOK {
			t.Fatalf("vkwatch %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
		for db := range 4 {
			in := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db, Protocol: 2, DisableIdentity: true})
			n, err := in.DBSize(ctx).Result()
			in.Close()
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int64{true: 10, false: 0}[db == tt.db]; n != want {
				t.Errorf("vkwatch %s: db %d holds %d keys, want %d", strings.Join(args, " "), db, n, want)
			}
		}
	}
}

// TestRecordingCutSays: recording ... -o CUT says what it wrote, as
// report does: the file, its size, its events and the time it spans; the
// events are those the cut holds.
func TestRecordingCutSays(t *testing.T) {
	cut := filepath.Join(t.TempDir(), "cut.jsonl.zst")
	code, stdout, stderr := runVKWatch(t, 30*time.Second, "recording", filepath.Join("..", "..", "source", "record", "testdata", "two-saves.jsonl"), "--save", "1", "--margin", "1s", "-o", cut)
	said := regexp.MustCompile(`^vkwatch: wrote ` + regexp.QuoteMeta(cut) + ` \((\d+) KiB, (\d+) events, \d\d:\d\d:\d\d – \d\d:\d\d:\d\d\)\n$`).FindStringSubmatch(stderr)
	if code != exitOK || stdout != "" || said == nil {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and one line saying what was written", code, stdout, stderr)
	}
	r := readRecording(t, cut)
	if n, _ := strconv.Atoi(said[2]); n != len(r.Events) || n == 0 {
		t.Errorf("it says %s events; the cut holds %d", said[2], len(r.Events))
	}
	if kib, _ := strconv.ParseInt(said[1], 10, 64); kib != (fileSize(t, cut)+1023)/1024 {
		t.Errorf("it says %s KiB; the file is %d bytes", said[1], fileSize(t, cut))
	}
}
