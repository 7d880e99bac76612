package ui

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/words"
)

// sendLog records the calls a model makes to Config.Send.
type sendLog struct {
	mu    sync.Mutex
	calls []string
}

// send logs a call as "POSITION COMMAND": 0 for addrA, 1 for addrB.
func (l *sendLog) send(node source.NodeID, args ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, fmt.Sprintf("%d %s", slices.Index([]string{uitest.AddrA, uitest.AddrB}, string(node)), strings.Join(args, " ")))
}

// nodes gives each address its own node id (the address, as for a server
// that is not a cluster node).
func nodes(addrs ...string) []Node {
	out := make([]Node, len(addrs))
	for i, a := range addrs {
		out[i] = Node{ID: source.NodeID(a), Addr: a}
	}
	return out
}

func (l *sendLog) got() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.calls)
	slices.Sort(out)
	return out
}

// run executes cmd as bubbletea would, batches included, and returns how
// many leaf commands ran. Batched commands run concurrently, as in a program.
func run(t *testing.T, cmd tea.Cmd) int {
	t.Helper()
	if cmd == nil {
		return 0
	}
	msg := cmd()
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		return 1
	}
	var wg sync.WaitGroup
	n := 0
	for _, c := range batch {
		if c == nil {
			continue
		}
		n++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if inner := c(); inner != nil {
				if _, nested := inner.(tea.BatchMsg); nested {
					t.Errorf("nested batch not expected")
				}
			}
		}()
	}
	wg.Wait()
	return n
}

func plainView(m Model) string { return ansi.Strip(m.View()) }

// lineWith returns the first line of the view containing s.
func lineWith(t *testing.T, m Model, s string) string {
	t.Helper()
	for _, l := range strings.Split(plainView(m), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line with %q in view:\n%s", s, plainView(m))
	return ""
}

func setup(t *testing.T, cfg Config, w, h int, evs []source.Event) Model {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = uitest.FixedNow
	}
	return feed(t, sized(New(cfg), w, h), evs)
}

func TestAbsentFieldsShowNA(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, absentScenario())
	for _, id := range []string{"footprint", "cow", "rss", "ops", "ping"} {
		block := chartBlock(t, m, 0, id)
		if !strings.HasSuffix(strings.TrimRight(ansi.Strip(block[0][:strings.Index(block[0], "┤")]), " "), text.NA) {
			t.Errorf("%s: the value now should read n/a: %q", id, block[0])
		}
		if all := strings.Join(block, "\n"); strings.Contains(all, "window max") && !strings.Contains(all, "window max n/a") {
			t.Errorf("%s: the window max should read n/a:\n%s", id, strings.Join(block, "\n"))
		}
		if plotted(block) {
			t.Errorf("%s draws a chart for a value the server never reported:\n%s", id, strings.Join(block, "\n"))
		}
	}
	for _, want := range []string{"saves by fork only", "ping 10s n/a", "last save BGSAVE fork by n/a"} {
		if !strings.Contains(plainView(m), want) {
			t.Errorf("view lacks %q:\n%s", want, plainView(m))
		}
	}
	wantFields(t, "absent fields", plainView(m), "took", "n/a server", "cow", "n/a", "cow peak", "n/a", "peak used", "n/a",
		"rss", "n/a", "fork pause", "n/a", "ops/s", "n/a → n/a", "ping max", "n/a → n/a", "footprint", "n/a")
	// A group whose every metric is absent has no scale either.
	if b := chartBlock(t, m, 0, "cow"); !strings.Contains(b[0], "┤     n/a") {
		t.Errorf("cow scale should read n/a: %q", b[0])
	}
	// used_memory is present: it must show a number and a chart.
	if b := chartBlock(t, m, 0, "used"); strings.Contains(b[0], text.NA+" ") || !plotted(b) {
		t.Errorf("used should have a value and a chart:\n%s", strings.Join(b, "\n"))
	}
}

// chartBlock returns the lines of pane i's chart of metric id, from the
// view, as the user sees them.
func chartBlock(t *testing.T, m Model, i int, id string) []string {
	t.Helper()
	k := plot.Index(id)
	lines := strings.Split(plainView(m), "\n")
	head := text.PadRight(plot.Charts[k].Label, 9) + " "
	if n := len(m.panes.ChartRows(i, id)); n > 0 {
		for y, l := range lines {
			if strings.Contains(l, "│ "+head) || strings.Contains(l, "║ "+head) {
				return lines[y : y+n]
			}
		}
	}
	t.Fatalf("no %s chart in view:\n%s", id, plainView(m))
	return nil
}

// plotted says whether chart lines draw anything: braille dots or blocks.
func plotted(lines []string) bool {
	for _, l := range lines {
		for _, r := range l {
			if (r > 0x2800 && r <= 0x28FF) || strings.ContainsRune("▁▂▃▄▅▆▇█", r) {
				return true
			}
		}
	}
	return false
}

func TestZeroIsNotAbsent(t *testing.T) {
	// A present zero (no copy-on-write: no child runs) must not read n/a.
	a := uitest.NewFake(0, false)
	evs := []source.Event{a.Connected(0), a.SampleEvent(0), a.SampleEvent(uitest.Tick)}
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, evs)
	if b := chartBlock(t, m, 0, "cow"); !strings.Contains(b[0], "idle") || strings.Contains(b[0], text.NA) || !plotted(b) {
		t.Errorf("cow chart: %q", b)
	}
}

func TestFooterShowsRefusedCommandAndClearsOnKey(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: log.send}, 120, 40, uitest.Scenario(1, 5*time.Second))
	m, cmd := press(m, "b")
	if !strings.Contains(plainView(m), "sending BGSAVE to "+uitest.AddrA+"…") {
		t.Fatalf("no sending note:\n%s", plainView(m))
	}
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGSAVE"}) {
		t.Fatalf("ran %d commands, sent %v", n, log.got())
	}
	const refusal = "ERR Background save already in progress"
	m = feed(t, m, []source.Event{commandEvent(0, 5*time.Second, "BGSAVE", "", refusal)})
	if l := lineWith(t, m, refusal); !strings.Contains(l, "BGSAVE on "+uitest.AddrA+": "+refusal) {
		t.Errorf("footer: %q", l)
	}
	if strings.Contains(plainView(m), "sending BGSAVE") {
		t.Errorf("the answer should replace the sending note")
	}
	m, cmd = press(m, "z") // any key, even an unbound one
	if cmd != nil {
		t.Errorf("unbound key returned a command")
	}
	if strings.Contains(plainView(m), refusal) {
		t.Errorf("footer not cleared by the next key:\n%s", plainView(m))
	}
}

func TestFooterShowsSuccessReply(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.Scenario(2, 5*time.Second))
	m = feed(t, m, []source.Event{commandEvent(1, 5*time.Second, "BGREWRITEAOF", "Background append only file rewriting started", "")})
	if !strings.Contains(plainView(m), "BGREWRITEAOF on "+uitest.AddrB+": Background append only file rewriting started") {
		t.Errorf("no success answer in footer:\n%s", plainView(m))
	}
}

func TestTabMovesFocus(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, uitest.Scenario(2, 5*time.Second))
	focusedAddr := func(m Model) string {
		// The focused pane is the one with the double border.
		lines := strings.Split(plainView(m), "\n")
		top, hdr := []rune(lines[1]), lines[1]
		half := len(top) / 2
		switch {
		case top[0] == '╔' && top[half] == '╭':
			return strings.Fields(hdr)[1]
		case top[0] == '╭' && top[half] == '╔':
			return strings.Fields(string([]rune(hdr)[half:]))[1]
		}
		t.Fatalf("no single focused pane:\n%s", plainView(m))
		return ""
	}
	if got := focusedAddr(m); got != uitest.AddrA {
		t.Fatalf("initial focus on %s", got)
	}
	m, _ = press(m, "tab")
	if got := focusedAddr(m); got != uitest.AddrB {
		t.Fatalf("after tab focus on %s", got)
	}
	_, cmd := press(m, "b")
	run(t, cmd)
	if !slices.Equal(log.got(), []string{"1 BGSAVE"}) {
		t.Errorf("b after tab sent %v, want to server 1", log.got())
	}
	m, _ = press(m, "tab")
	if got := focusedAddr(m); got != uitest.AddrA {
		t.Fatalf("tab should wrap around, focus on %s", got)
	}
	m, _ = press(m, "shift+tab")
	if got := focusedAddr(m); got != uitest.AddrB {
		t.Fatalf("shift+tab should go back, focus on %s", got)
	}
}

func TestUpperCaseSendsToBothAtOnce(t *testing.T) {
	for _, tc := range []struct{ key, cmd string }{{"B", "BGSAVE"}, {"A", "BGREWRITEAOF"}} {
		t.Run(tc.key, func(t *testing.T) {
			var log sendLog
			m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, nil)
			m, cmd := press(m, tc.key)
			if len(log.got()) != 0 {
				t.Fatalf("Send called inside Update: %v", log.got())
			}
			// Two commands in one batch: bubbletea runs them concurrently.
			if n := run(t, cmd); n != 2 {
				t.Fatalf("got %d commands, want a batch of 2", n)
			}
			want := []string{"0 " + tc.cmd, "1 " + tc.cmd}
			if !slices.Equal(log.got(), want) {
				t.Errorf("sent %v, want %v", log.got(), want)
			}
			for _, a := range []string{uitest.AddrA, uitest.AddrB} {
				if !strings.Contains(plainView(m), "sending "+tc.cmd+" to "+a) {
					t.Errorf("no note for %s:\n%s", a, plainView(m))
				}
			}
		})
	}
}

func TestReadOnlyRefuses(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send, ReadOnly: true}, 200, 50, nil)
	for _, k := range []string{"b", "a", "B", "A"} {
		var cmd tea.Cmd
		m, cmd = press(m, k)
		run(t, cmd)
		want := "read-only: " + map[string]string{"b": "BGSAVE", "B": "BGSAVE", "a": "BGREWRITEAOF", "A": "BGREWRITEAOF"}[k] +
			" not sent (--read-only)"
		want = footAt + want
		if l := strings.TrimSpace(lineWith(t, m, "read-only:")); l != want {
			t.Errorf("%s: footer %q, want %q", k, l, want)
		}
	}
	if got := log.got(); len(got) != 0 {
		t.Errorf("read-only model sent %v", got)
	}
}

func TestPauseFreezesViewButKeepsFolding(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 10*time.Second))
	before := plainView(m)
	m, _ = press(m, "p")
	paused := plainView(m)
	if !strings.Contains(paused, "PAUSED at 15:05:35") {
		t.Fatalf("no paused mark with the pause time:\n%s", paused)
	}
	// New events arrive, including a finished save.
	a := uitest.NewFake(0, false)
	a.Seq = 1000
	var s uitest.Script
	a.StartSave(10*time.Second, source.SaveFork)
	s.Run(a, 10*time.Second, 20*time.Second, nil)
	s.Add(a.EndSave(20 * time.Second))
	m = feed(t, m, s.Events)
	if plainView(m) != paused {
		t.Errorf("view changed while paused")
	}
	if len(m.Reports()) != 1 {
		t.Errorf("events must still be folded while paused: %d reports", len(m.Reports()))
	}
	// The panes of the paused view are the ones from before the pause
	// (the title line and the help, which says "resume" now, differ).
	panes := func(v string) string {
		l := strings.Split(v, "\n")
		return strings.Join(l[1:len(l)-1], "\n")
	}
	if panes(paused) != panes(before) {
		t.Errorf("pausing redrew the panes:\n%s\n%s", before, paused)
	}
	m, _ = press(m, "p")
	if v := plainView(m); strings.Contains(v, "PAUSED") || !strings.Contains(v, "last save BGSAVE fork") {
		t.Errorf("resume should show the events that came meanwhile:\n%s", v)
	}
}

func TestTooSmallNamesTheSizeNeeded(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 40, 10, uitest.Scenario(2, 5*time.Second))
	v := plainView(m)
	w, h := minSize()
	if !strings.Contains(v, fmt.Sprintf("needs at least %dx%d", w, h)) || !strings.Contains(v, "too small: 40x10") {
		t.Fatalf("too-small message:\n%s", v)
	}
	// The size named is really the minimum: one pane fits there, and a
	// terminal one column or one row smaller does not.
	for _, tc := range []struct {
		w, h  int
		small bool
	}{{w, h, false}, {w - 1, h, true}, {w, h - 1, true}} {
		m = sized(m, tc.w, tc.h)
		v = plainView(m)
		if got := strings.Contains(v, "too small"); got != tc.small {
			t.Errorf("%dx%d: too small=%v, want %v:\n%s", tc.w, tc.h, got, tc.small, v)
		}
		if !tc.small {
			if n := strings.Count(v, "\n") + 1; n > tc.h {
				t.Errorf("%dx%d: view has %d lines", tc.w, tc.h, n)
			}
			for _, l := range strings.Split(v, "\n") {
				if ansi.StringWidth(l) > tc.w {
					t.Errorf("%dx%d: line wider than the terminal: %q", tc.w, tc.h, l)
				}
			}
		}
	}
}

func TestLayoutFitsTerminal(t *testing.T) {
	// Every size from tiny to large: no line wider than the terminal, no
	// more lines than it has.
	evs := uitest.Scenario(2, 30*time.Second)
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 80, 24, evs)
	for _, w := range []int{20, 57, 58, 80, 115, 116, 117, 150, 200, 233} {
		for _, h := range []int{5, 19, 20, 24, 36, 40, 47, 50} {
			for _, full := range []bool{false, true} {
				mm := sized(m, w, h)
				if full {
					mm, _ = press(mm, "?")
				}
				v := plainView(mm)
				if n := strings.Count(v, "\n") + 1; n > h {
					t.Errorf("%dx%d full=%v: %d lines", w, h, full, n)
				}
				for _, l := range strings.Split(v, "\n") {
					if ansi.StringWidth(l) > w {
						t.Errorf("%dx%d full=%v: line of %d cells: %q", w, h, full, ansi.StringWidth(l), l)
						break
					}
				}
			}
		}
	}
}

func TestSidePanesWhenWideStackedWhenTall(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.Scenario(2, 5*time.Second))
	if l := lineWith(t, m, uitest.AddrA); !strings.Contains(l, uitest.AddrB) {
		t.Errorf("200x50: panes should be side by side: %q", l)
	}
	m = sized(m, 100, 50)
	if l := lineWith(t, m, uitest.AddrA); strings.Contains(l, uitest.AddrB) || !strings.Contains(plainView(m), uitest.AddrB) {
		t.Errorf("100x50: panes should be stacked:\n%s", plainView(m))
	}
	// 80x24: both panes, stacked; shorter still, the focused one alone.
	m = sized(m, 80, 24)
	if l := lineWith(t, m, uitest.AddrA); strings.Contains(l, uitest.AddrB) || !strings.Contains(plainView(m), uitest.AddrB) || strings.Contains(plainView(m), "pane 1/2") {
		t.Errorf("80x24: both panes should show, stacked:\n%s", plainView(m))
	}
	m = sized(m, 80, 16)
	if v := plainView(m); !strings.Contains(v, uitest.AddrA) || strings.Contains(v, uitest.AddrB) || !strings.Contains(v, "pane 1/2") {
		t.Errorf("80x16: only the focused pane should show:\n%s", v)
	}
}

// TestQuitKeys: q quits; ctrl+c quits at once as an interrupt (the
// program then ends with status 130, as the terminal's own ctrl+c does),
// and the full help says so of each: one binding a key, its own words.
func TestQuitKeys(t *testing.T) {
	for _, c := range []struct {
		key  string
		want tea.Msg
	}{{"q", tea.QuitMsg{}}, {"ctrl+c", tea.InterruptMsg{}}} {
		m := newTestModel(uitest.AddrA)
		_, cmd := press(m, c.key)
		if cmd == nil {
			t.Fatalf("%s: no command", c.key)
		}
		if got := cmd(); got != c.want {
			t.Errorf("%s: command gives %T, want %T", c.key, got, c.want)
		}
	}
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, nil)
	helps := map[string]string{}
	for _, col := range m.keyHelp(true).Full {
		for _, b := range col {
			for _, k := range b.Keys() {
				if k == "q" || k == "ctrl+c" {
					helps[k] = b.Help().Key + " " + b.Help().Desc
				}
			}
		}
	}
	if helps["q"] != "q quit" || helps["ctrl+c"] != "ctrl+c quit now, exit 130" {
		t.Errorf("full help: q %q, ctrl+c %q", helps["q"], helps["ctrl+c"])
	}
}

func TestHelpToggles(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, nil)
	if strings.Contains(plainView(m), "shift+tab") {
		t.Fatalf("short help should not list shift+tab")
	}
	m, _ = press(m, "?")
	if !strings.Contains(plainView(m), "shift+tab") || !strings.Contains(plainView(m), "bgsave both") {
		t.Fatalf("full help missing:\n%s", plainView(m))
	}
	m, _ = press(m, "?")
	if strings.Contains(plainView(m), "shift+tab") {
		t.Fatalf("? should close the full help")
	}
}

func TestDisconnectedPane(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, disconnectScenario())
	if l := lineWith(t, m, "disconnected"); !strings.Contains(l, "disconnected: dial tcp 127.0.0.1:7001: connect: connection refused, retrying") {
		t.Errorf("state line: %q", l)
	}
	marks := lineWith(t, m, panesview.MarkLegend)
	if strings.Count(marks, "×") < 2 {
		t.Errorf("marker row should show the gaps: %q", marks)
	}
	// The columns inside a gap carry no chart (its first and last columns
	// may also hold samples from before and after it).
	used := []rune(lineWith(t, m, "│ used "))
	row := []rune(marks)
	for i := 1; i+1 < len(row); i++ {
		if row[i-1] == '×' && row[i] == '×' && row[i+1] == '×' && used[i] != ' ' {
			t.Errorf("column %d is a gap but the chart draws %q", i, used[i])
		}
	}
	// Reconnecting clears the state; the history stays.
	m = feed(t, m, []source.Event{uitest.NewFake(0, false).Connected(61 * time.Second)})
	if l := lineWith(t, m, "connected"); strings.Contains(l, "disconnected") {
		t.Errorf("after reconnect: %q", l)
	}
	if !strings.Contains(lineWith(t, m, panesview.MarkLegend), "×") {
		t.Errorf("reconnecting erased the gap marks")
	}
}

func TestSaveProgressAndReport(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 28*time.Second))
	if !strings.Contains(plainView(m), "▶ BGSAVE fork by vkwatch") || !strings.Contains(plainView(m), "INFO 9.75 MiB") {
		t.Errorf("during save:\n%s", plainView(m))
	}
	wantFields(t, "during save", plainView(m), "keys", "78,000/100,000", "progress", "78.0%", "elapsed", "7.8s", "ETA", "2.2s", "cow", "10.4 MiB proc")
	if !strings.Contains(plainView(m), "████░░░") {
		t.Errorf("no progress bar:\n%s", plainView(m))
	}
	m = setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 60*time.Second))
	for _, want := range []string{"last save BGSAVE fork by vkwatch · ok", "next save   cow"} {
		if !strings.Contains(plainView(m), want) {
			t.Errorf("after save, view lacks %q:\n%s", want, plainView(m))
		}
	}
	wantFields(t, "after save", plainView(m), "took", "15s server", "observed", "15.0s", "fork pause", "1.20ms",
		"cow", "17.0 MiB", "cow peak", "18.0 MiB at 62%", "footprint", "+20.0 MiB", "peak used", "+3.00 MiB", "rss", "+19.0 MiB",
		"ops/s", "51.2k → 36.0k", "ping max", "900µs → 31.0ms")
	marks := lineWith(t, m, panesview.MarkLegend)
	marks = marks[strings.Index(marks, panesview.MarkLegend)+len(panesview.MarkLegend):]
	fi, ei := strings.IndexRune(marks, 'F'), strings.IndexRune(marks, panesview.MarkEnd)
	if fi < 0 || ei <= fi || strings.Trim(marks[fi+1:ei], string(panesview.MarkRun)) != "" {
		t.Errorf("marker row should show the save as F───%c: %q", panesview.MarkEnd, marks)
	}
	if got := m.Reports(); len(got) != 1 || got[0].Kind != source.SaveFork || got[0].Observed != 15*time.Second {
		t.Errorf("Reports() = %+v", got)
	}
}

func TestReportsInOrderAndCopied(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, nil)
	a, b := uitest.NewFake(0, false), uitest.NewFake(1, true)
	a.StartSave(time.Second, source.SaveFork)
	b.StartSave(time.Second, source.SaveAOF)
	m = feed(t, m, []source.Event{b.EndSave(2 * time.Second), a.EndSave(3 * time.Second)})
	got := m.Reports()
	if len(got) != 2 || got[0].Node != uitest.NodeOf(1) || got[0].Kind != source.SaveAOF || got[1].Node != uitest.NodeOf(0) {
		t.Fatalf("Reports() = %+v", got)
	}
	got[0].Status = "changed"
	if m.Reports()[0].Status == "changed" {
		t.Errorf("Reports() shares its slice with the model")
	}
}

func TestEventsForUnknownServersAreIgnored(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 2*time.Second))
	before := plainView(m)
	b := uitest.NewFake(1, true)
	m = feed(t, m, []source.Event{b.Connected(time.Second), b.Disconnected(time.Second, "boom"), {Node: "nobody", Kind: source.EventSample}})
	if strings.Contains(plainView(m), "boom") || plainView(m) != before {
		t.Errorf("an event for server 1 changed a one-server UI")
	}
}

func TestChartWindowMaxFollowsTheWindow(t *testing.T) {
	// A spike that scrolled out of the window must stop setting the scale:
	// the sparkline's own max would only ever grow.
	a := uitest.NewFake(0, false)
	var s uitest.Script
	s.Add(a.Connected(0))
	spike := a.SampleEvent(0)
	spike.Sample.Ping.Max = 900 * time.Millisecond
	s.Add(spike)
	s.Run(a, uitest.Tick, 5*time.Second, nil)
	cfg := Config{Nodes: nodes(uitest.AddrA), History: 10 * time.Second, Interval: uitest.Tick}
	m := setup(t, cfg, 120, 40, s.Events)
	// The scale tops at the round step above the spike.
	if l := lineWith(t, m, "│ ping "); !strings.Contains(l, "┤      1s") {
		t.Fatalf("spike not the max while in the window: %q", l)
	}
	var late uitest.Script
	late.Run(a, 5*time.Second, 40*time.Second, nil)
	m = feed(t, m, late.Events)
	if l := lineWith(t, m, "│ ping "); strings.Contains(l, "┤      1s") {
		t.Errorf("spike still sets the max after leaving the window: %q", l)
	}
}

func TestColourAddsNoText(t *testing.T) {
	// Styles are captured in New under the profile of the moment: a colour
	// frame, stripped of its escapes, must read exactly like the Ascii one,
	// and every line must keep the terminal's width.
	evs := uitest.Scenario(2, 60*time.Second)
	plain := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs).View()
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	colour := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs).View()
	if colour == plain || !strings.Contains(colour, "\x1b[") {
		t.Fatalf("TrueColor frame has no colour")
	}
	if got := ansi.Strip(colour); got != plain {
		t.Errorf("colour changed the text:\n%s\nwant:\n%s", got, plain)
	}
}

func TestResizeWhilePausedShowsNothingNewer(t *testing.T) {
	// A resize redraws the charts while paused: samples that arrived after
	// the pause must stay out of them, even those that fall in the right
	// edge's column.
	evs := uitest.Scenario(2, 60*time.Second)
	cut := len(evs) * 2 / 3
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs[:cut])
	m, _ = press(m, "p")
	paused := plainView(m)
	m = feed(t, m, evs[cut:])
	m = sized(sized(m, 150, 50), 200, 50)
	if plainView(m) != paused {
		t.Errorf("resizing while paused changed the frame:\n%s\nwant:\n%s", plainView(m), paused)
	}
}

// TestSlotMigrationMarked: a slot migration's fork is marked M in the
// marker row, and the legend says what M is while one is in view (it
// showed as "?" before); without one the legend is the usual.
func TestSlotMigrationMarked(t *testing.T) {
	evs := uitest.Scripted(uitest.NewFake(0, true), 60*time.Second, source.SaveSlotMigration, uitest.Span{Start: 20 * time.Second, End: 35 * time.Second})
	for _, c := range [][2]int{{200, 50}, {120, 40}, {80, 24}} {
		m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, c[0], c[1], evs)
		marks := lineWith(t, m, "×gap")
		legend := panesview.MarkLegendFor(999, true)
		if !strings.Contains(marks, legend) {
			legend = panesview.MarkLegendMShort
		}
		i := strings.Index(marks, legend)
		if i < 0 {
			t.Fatalf("%dx%d: the legend names no migration: %q", c[0], c[1], marks)
		}
		marks = marks[i+len(legend):]
		if !strings.ContainsRune(marks, words.MarkMigration) || strings.ContainsRune(marks, '?') {
			t.Errorf("%dx%d: marker row should show the migration as M: %q", c[0], c[1], marks)
		}
	}
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 60*time.Second))
	if l := lineWith(t, m, "×gap"); strings.Contains(l, "migration") || strings.Contains(l, "/M") {
		t.Errorf("a fork save's legend names a migration: %q", l)
	}
}
