package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/tableview"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// fullTableWidth is the narrowest terminal that shows every column of
// reportsScenario(3).
const fullTableWidth = 180

// tableLines returns the lines of the view between the title line and the
// footer: the reports view when the table is open.
func tableLines(m Model) []string {
	l := strings.Split(plainView(m), "\n")
	return l[1 : len(l)-2]
}

// reportRows returns the table's data rows: each report's two lines
// joined.
func reportRows(m Model) []string {
	var lines []string
	heads := 0
	for _, l := range tableLines(m) {
		switch {
		case !strings.HasPrefix(l, "│"):
		case heads < 2:
			heads++ // the heads' two lines
		default:
			lines = append(lines, l)
		}
	}
	var rows []string
	for i := 0; i+1 < len(lines); i += 2 {
		rows = append(rows, lines[i]+"\n"+lines[i+1])
	}
	return rows
}

// cellsOf is a table row's cells by column head: the heads' two lines
// name the cells of a row's two lines.
func cellsOf(t *testing.T, m Model, row string) map[string]string {
	t.Helper()
	split := func(l string) []string {
		f := strings.Split(strings.Trim(l, "│"), "│")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f
	}
	var heads []string
	for _, l := range tableLines(m) {
		if strings.HasPrefix(l, "│") && len(heads) < 2 {
			heads = append(heads, l)
		}
	}
	out := map[string]string{}
	for k, l := range strings.Split(row, "\n") {
		h, c := split(heads[k]), split(l)
		if len(h) != len(c) {
			t.Fatalf("heads %q, cells %q", h, c)
		}
		for i := range h {
			if h[i] != "" {
				out[h[i]] = c[i]
			}
		}
	}
	return out
}

func TestReportsTableOpensAndCloses(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.ReportsScenario(3))
	if strings.Contains(plainView(m), "save reports") {
		t.Fatal("table shown before r")
	}
	m, _ = press(m, "r")
	v := plainView(m)
	if !strings.Contains(v, "save reports · 1–4 of 4") || strings.Contains(v, "last save") {
		t.Fatalf("r should replace the panes by the table:\n%s", v)
	}
	if got := len(reportRows(m)); got != 4 {
		t.Fatalf("%d rows, want 4:\n%s", got, v)
	}
	if !strings.Contains(v, "r/esc close") {
		t.Errorf("help should say how to close the table:\n%s", v)
	}
	m, _ = press(m, "r")
	if strings.Contains(plainView(m), "save reports") || !strings.Contains(plainView(m), "last save") {
		t.Fatalf("r again should close the table:\n%s", plainView(m))
	}
	m, _ = press(m, "r")
	m, _ = pressKey(m, tea.KeyEsc)
	if strings.Contains(plainView(m), "save reports") {
		t.Fatalf("esc should close the table:\n%s", plainView(m))
	}
}

func TestReportsTableCells(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, fullTableWidth, 50, uitest.ReportsScenario(3))
	m, _ = press(m, "r")
	rows := reportRows(m)
	if len(rows) != 4 {
		t.Fatalf("rows:\n%s", plainView(m))
	}
	wantHead := []string{"started", "server", "kind", "by", "status", "took", "observed", "fork pause", "cow", "forecast", "fc error", "cow peak", "peak at",
		"INFO peak", "footprint +", "used +", "rss +", "/proc rss +", "/proc peak", "ops/s", "writers/s", "ping p50", "ping p99", "ping max", "blocked"}
	first := cellsOf(t, m, rows[0])
	for _, h := range wantHead {
		if _, ok := first[h]; !ok {
			t.Fatalf("at %d columns every column should show: %s is not there:\n%s", fullTableWidth, h, plainView(m))
		}
	}
	// The scenario's fork save of server A, 20-35 s (see endSave).
	// The forecast before it: no save to calibrate on, the upper bound
	// of the writes before it (see forecast.Predict).
	want := []string{"15:04:25", uitest.AddrA, "fork", "vkwatch", "ok", "15s", "15.0s", "1.20ms", "17.0 MiB", "102 MiB bound", "within bound", "18.0 MiB", "62%",
		"18.0 MiB", "+20.0 MiB", "+3.00 MiB", "+19.0 MiB",
		text.NA, "18.0 MiB", "51.2k → 36.0k", text.NA, "120µs → 180µs", "400µs → 2.00ms", "900µs → 31.0ms", "0"}
	for i, h := range wantHead {
		if first[h] != want[i] {
			t.Errorf("first row: %s = %q, want %q", h, first[h], want[i])
		}
	}
	// Second report: server B, forkless, with its own writers: no child,
	// so no copy-on-write and no fork pause (none, not n/a), and the
	// writers it blocked.
	if got := cellsOf(t, m, rows[2]); got["server"] != uitest.AddrB || got["kind"] != "forkless" || got["by"] != "schedule" ||
		got["writers/s"] != "5.10k → 4.10k" || got["/proc rss +"] != "+10.0 MiB" || got["cow"] != "none" || got["fork pause"] != "none" || got["blocked"] != "3" || got["forecast"] != "0 B forkless" {
		t.Errorf("third row %q", got)
	}
	// The last report has only what every report has: the rest is n/a.
	for h, c := range cellsOf(t, m, rows[3]) {
		switch h {
		case "server", "kind", "observed", "forecast": // the store forecasts every save
			if c == text.NA {
				t.Errorf("%s should be present: %q", h, c)
			}
		default:
			if c != text.NA {
				t.Errorf("%s of a report without it = %q, want n/a", h, c)
			}
		}
	}
}

func TestReportsTableDropsColumnsToFit(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.ReportsScenario(3))
	m, _ = press(m, "r")
	for _, w := range []int{250, 200, fullTableWidth, 150, 120, 100, 80, 58} {
		m = sized(m, w, 40)
		v := plainView(m)
		for _, l := range strings.Split(v, "\n") {
			if ansi.StringWidth(l) > w {
				t.Errorf("%d columns: line of %d cells: %q", w, ansi.StringWidth(l), l)
			}
		}
		head := lineWith(t, m, "│ started") + lineWith(t, m, "│ server")
		for _, must := range []string{"server", "kind", "status"} {
			if !strings.Contains(head, must) {
				t.Errorf("%d columns: the %s column must always show: %q", w, must, head)
			}
		}
		hidden := strings.Contains(v, "hidden at this width")
		if full := w >= fullTableWidth; full == hidden {
			t.Errorf("%d columns: hidden note %v:\n%s", w, hidden, v)
		}
		// Any column left out is named in the note.
		if hidden && !strings.Contains(head, "started") && !strings.Contains(lineWith(t, m, "hidden at this width"), "started") {
			t.Errorf("%d columns: started is neither shown nor named hidden", w)
		}
	}
}

func TestReportsTableScrolls(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 120, 24, uitest.ReportsScenario(30))
	m, _ = press(m, "r")
	rows := tableview.Rows(24 - 3)
	if rows != (24-3-tableview.Chrome)/2 {
		t.Fatalf("%d reports fit 21 lines: two lines each", rows)
	}
	if got := len(reportRows(m)); got != rows {
		t.Fatalf("%d rows shown at 24 lines, want %d:\n%s", got, rows, plainView(m))
	}
	if n := strings.Count(plainView(m), "\n") + 1; n > 24 {
		t.Fatalf("view has %d lines", n)
	}
	// It opens on the newest: 31 reports, the last rows of them.
	if !strings.Contains(plainView(m), fmt.Sprintf("%d–31 of 31 · ↑/↓ scroll", 31-rows+1)) {
		t.Fatalf("title:\n%s", plainView(m))
	}
	newest := reportRows(m)[rows-1]
	m, _ = pressKey(m, tea.KeyUp)
	m, _ = pressKey(m, tea.KeyUp)
	if !strings.Contains(plainView(m), fmt.Sprintf("%d–29 of 31", 31-rows-1)) || reportRows(m)[rows-1] == newest {
		t.Fatalf("up twice:\n%s", plainView(m))
	}
	// A report arriving while scrolled up leaves the view where it was.
	b := uitest.NewFake(1, true)
	b.StartSave(300*time.Second, source.SaveAOF)
	m = feed(t, m, []source.Event{b.EndSave(302 * time.Second)})
	if !strings.Contains(plainView(m), fmt.Sprintf("%d–29 of 32", 31-rows-1)) {
		t.Fatalf("scrolled view moved with a new report:\n%s", plainView(m))
	}
	// Down to the bottom follows the newest again.
	for range 5 {
		m, _ = pressKey(m, tea.KeyDown)
	}
	if !strings.Contains(plainView(m), fmt.Sprintf("%d–32 of 32", 32-rows+1)) {
		t.Fatalf("down to the end:\n%s", plainView(m))
	}
	b.StartSave(302*time.Second, source.SaveAOF)
	m = feed(t, m, []source.Event{b.EndSave(303 * time.Second)})
	if !strings.Contains(plainView(m), fmt.Sprintf("%d–33 of 33", 33-rows+1)) {
		t.Fatalf("at the bottom the table should follow new reports:\n%s", plainView(m))
	}
	// Up past the top stops at the first report.
	for range 50 {
		m, _ = pressKey(m, tea.KeyUp)
	}
	if !strings.Contains(plainView(m), fmt.Sprintf("1–%d of 33", rows)) || !strings.Contains(reportRows(m)[0], "17.0 MiB") {
		t.Fatalf("top:\n%s", plainView(m))
	}
}

func TestReportsTableFitsTerminal(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 80, 24, uitest.ReportsScenario(40))
	m, _ = press(m, "r")
	for _, w := range []int{58, 80, 117, 150, 200, 233} {
		for _, h := range []int{20, 24, 36, 50} {
			for _, full := range []bool{false, true} {
				mm := sized(m, w, h)
				if full {
					mm, _ = press(mm, "?")
				}
				v := plainView(mm)
				if strings.Contains(v, "too small") {
					continue
				}
				if n := strings.Count(v, "\n") + 1; n > h {
					t.Errorf("%dx%d full=%v: %d lines", w, h, full, n)
				}
				for _, l := range strings.Split(v, "\n") {
					if ansi.StringWidth(l) > w {
						t.Errorf("%dx%d full=%v: line of %d cells: %q", w, h, full, ansi.StringWidth(l), l)
						break
					}
				}
				if len(reportRows(mm)) == 0 {
					t.Errorf("%dx%d full=%v: no rows:\n%s", w, h, full, v)
				}
			}
		}
	}
}

func TestReportsTableEmpty(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 10*time.Second))
	m, _ = press(m, "r")
	if !strings.Contains(plainView(m), "save reports · none yet") {
		t.Fatalf("empty table:\n%s", plainView(m))
	}
	// The first report shows up while the table is open.
	a := uitest.NewFake(0, false)
	a.StartSave(10*time.Second, source.SaveFork)
	m = feed(t, m, []source.Event{a.EndSave(12 * time.Second)})
	if len(reportRows(m)) != 1 {
		t.Fatalf("new report not in the open table:\n%s", plainView(m))
	}
}

func TestReportsTablePaused(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.ReportsScenario(2))
	m, _ = press(m, "p")
	m, _ = press(m, "r")
	a := uitest.NewFake(0, false)
	a.StartSave(100*time.Second, source.SaveFork)
	m = feed(t, m, []source.Event{a.EndSave(101 * time.Second)})
	if got := len(reportRows(m)); got != 3 || !strings.Contains(plainView(m), "PAUSED") {
		t.Fatalf("paused table should keep its 3 rows, has %d:\n%s", got, plainView(m))
	}
	m, _ = press(m, "p")
	if got := len(reportRows(m)); got != 4 {
		t.Fatalf("resumed table should show the report that came meanwhile, has %d rows:\n%s", got, plainView(m))
	}
}

func TestEscClosesHelpAndTable(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.ReportsScenario(1))
	isHelp := func(m Model) bool { return strings.Contains(plainView(m), "shift+tab") }
	isTable := func(m Model) bool { return strings.Contains(plainView(m), "save reports") }

	m, _ = press(m, "?")
	m, _ = pressKey(m, tea.KeyEsc)
	if isHelp(m) {
		t.Fatal("esc should close the full help")
	}
	// Help opened over the table: esc closes the help first.
	m, _ = press(m, "r")
	m, _ = press(m, "?")
	if !isHelp(m) || !isTable(m) {
		t.Fatalf("table with full help:\n%s", plainView(m))
	}
	m, _ = pressKey(m, tea.KeyEsc)
	if isHelp(m) || !isTable(m) {
		t.Fatalf("first esc should close the help only:\n%s", plainView(m))
	}
	m, _ = pressKey(m, tea.KeyEsc)
	if isTable(m) {
		t.Fatalf("second esc should close the table:\n%s", plainView(m))
	}
	// Table opened over the help: esc closes the table first.
	m, _ = press(m, "?")
	m, _ = press(m, "r")
	m, _ = pressKey(m, tea.KeyEsc)
	if !isHelp(m) || isTable(m) {
		t.Fatalf("esc should close the table, keep the help:\n%s", plainView(m))
	}
	// Nothing open: esc does nothing, and returns no command.
	m, _ = pressKey(m, tea.KeyEsc)
	before := plainView(m)
	m, cmd := pressKey(m, tea.KeyEsc)
	if cmd != nil || plainView(m) != before {
		t.Errorf("esc with nothing open changed the view or returned a command")
	}
}

func TestReportsTableColourAddsNoText(t *testing.T) {
	evs := uitest.ReportsScenario(8)
	open := func() string {
		m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 150, 40, evs)
		m, _ = press(m, "r")
		return m.View()
	}
	plain := open()
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	colour := open()
	if colour == plain || !strings.Contains(colour, "\x1b[") {
		t.Fatalf("TrueColor table has no colour")
	}
	if got := ansi.Strip(colour); got != plain {
		t.Errorf("colour changed the text:\n%s\nwant:\n%s", got, plain)
	}
}

// pressKey returns m after a special key press.
func pressKey(m Model, k tea.KeyType) (Model, tea.Cmd) {
	nm, cmd := m.Update(tea.KeyMsg{Type: k})
	return nm.(Model), cmd
}

func TestPanesAfterTableMatchPanesWithout(t *testing.T) {
	// The charts are not drawn while the table hides them: closing it must
	// show exactly what a model that never opened it shows, paused or not.
	evs := uitest.Scenario(2, 60*time.Second)
	cut := len(evs) / 3
	for _, pause := range []bool{false, true} {
		plain := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs[:cut])
		tabled := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs[:cut])
		tabled, _ = press(tabled, "r")
		plain = feed(t, plain, evs[cut:2*cut])
		tabled = feed(t, tabled, evs[cut:2*cut])
		if pause {
			plain, _ = press(plain, "p")
			tabled, _ = press(tabled, "p")
		}
		plain = feed(t, plain, evs[2*cut:])
		tabled = feed(t, tabled, evs[2*cut:])
		tabled, _ = press(tabled, "r")
		plain, _ = press(plain, "z") // the same number of keys: the footer is cleared alike
		if plainView(tabled) != plainView(plain) {
			t.Errorf("pause=%v: after closing the table:\n%s\nwant:\n%s", pause, plainView(tabled), plainView(plain))
		}
	}
}
