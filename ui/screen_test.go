package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/chart"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// cowScenario: two servers save at the same moment, 10 s to 20 s; the
// first is idle and its save costs 1 MiB of copy-on-write, the second is
// under load and its save costs 111 MiB (the demo numbers).
func cowScenario() []source.Event {
	var out []source.Event
	for i, cow := range []int64{1 * uitest.MiB, 111 * uitest.MiB} {
		evs := uitest.Scripted(uitest.NewFake(i, false), 30*time.Second, source.SaveFork, uitest.Span{Start: 10 * time.Second, End: 20 * time.Second})
		for _, ev := range evs {
			if ev.Sample != nil && ev.Sample.Save != nil {
				ev.Sample.COW = source.Some(cow)
			}
		}
		if out == nil {
			out = evs
		} else {
			out = uitest.Interleave(out, evs)
		}
	}
	return out
}

// plotTop is the highest row of pane i's chart of metric id that draws
// anything, counted from the chart's bottom row (0), or -1 when it draws
// nothing.
func plotTop(t *testing.T, m Model, i int, id string) int {
	t.Helper()
	rows := m.panes.ChartRows(i, id)
	if rows == nil {
		t.Fatalf("pane %d shows no %s chart", i, id)
	}
	for y, r := range rows {
		if plotted([]string{ansi.Strip(r)}) {
			return len(rows) - 1 - y
		}
	}
	return -1
}

func TestOneScaleAcrossPanes(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, cowScenario())
	if !strings.Contains(plainView(m), "scales shared") {
		t.Fatalf("the screen should say the scales are shared:\n%s", plainView(m))
	}
	idle, loaded := plotTop(t, m, 0, "cow"), plotTop(t, m, 1, "cow")
	rows := len(m.panes.ChartRows(0, "cow"))
	if rows < 4 {
		t.Fatalf("cow chart of %d rows at 200x50: too short to compare", rows)
	}
	// The scale is round: 111 MiB draws a little over half way up a
	// 200 MiB scale, 1 MiB at the bottom.
	if want := rows - 1 - chart.RowOf(111.0/200, rows); loaded != want || idle >= loaded || idle > 0 {
		t.Errorf("shared scale: 111 MiB should reach row %d of %d, 1 MiB stay at the bottom: idle %d, loaded %d", want, rows, idle, loaded)
	}
	// Both panes show the same top of scale, the round step above 111 MiB.
	for i := range 2 {
		if b := chartBlock(t, m, i, "cow"); !strings.Contains(b[0], "┤ 200 MiB") {
			t.Errorf("pane %d: the cow scale should top at 200 MiB: %q", i, b[0])
		}
	}

	m, _ = press(m, "s")
	if !strings.Contains(plainView(m), "scales per pane") {
		t.Fatalf("the screen should say the scales are per pane:\n%s", plainView(m))
	}
	idle2, loaded2 := plotTop(t, m, 0, "cow"), plotTop(t, m, 1, "cow")
	if idle2 != rows-1 || loaded2 != loaded {
		t.Errorf("per-pane scales: the idle pane's 1 MiB should reach the top row (%d) of its 1 MiB scale, the loaded one stay at %d: idle %d, loaded %d", rows-1, loaded, idle2, loaded2)
	}
	if b := chartBlock(t, m, 0, "cow"); !strings.Contains(b[0], "┤   1 MiB") {
		t.Errorf("per-pane: the idle pane's cow scale should top at 1 MiB: %q", b[0])
	}
	m, _ = press(m, "s")
	if got := plotTop(t, m, 0, "cow"); got != 0 {
		t.Errorf("s again: shared once more, idle at %d", got)
	}
}

// emptyRows counts the rows of a frame of panes side by side, each w
// cells wide, that show nothing inside the panes' borders: no text, no
// chart, no axis.
func emptyRows(v string, w int) int {
	n := 0
	for _, l := range strings.Split(v, "\n") {
		r := []rune(l)
		empty := true
		for x := 0; x < len(r); x += w {
			seg := r[x:min(x+w, len(r))]
			if len(seg) > 2 && strings.ContainsRune("│║", seg[0]) {
				seg = seg[1 : len(seg)-1]
			}
			empty = empty && strings.TrimSpace(string(seg)) == ""
		}
		if empty {
			n++
		}
	}
	return n
}

func TestChartsFillTheTerminal(t *testing.T) {
	evs := uitest.Scenario(2, 60*time.Second)
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs)
	v := plainView(m)
	if n := strings.Count(v, "\n") + 1; n != 50 {
		t.Errorf("200x50: %d lines", n)
	}
	if n := emptyRows(v, 100); n > 3 {
		t.Errorf("200x50: %d empty rows, want at most 3:\n%s", n, v)
	}
	if l := lineWith(t, m, uitest.AddrA); !strings.Contains(l, uitest.AddrB) {
		t.Errorf("200x50: panes side by side")
	}
	// Every chart shows its scale (top and unit) and the time axis reads
	// how long ago.
	for _, id := range []string{"footprint", "cow", "rss", "used"} {
		if b := chartBlock(t, m, 0, id); !strings.Contains(b[0], "MiB") || !strings.Contains(b[len(b)-1], "┤       0") {
			t.Errorf("%s: no scale: %q ... %q", id, b[0], b[len(b)-1])
		}
	}
	if b := chartBlock(t, m, 0, "ping"); !strings.Contains(b[0], "ms") {
		t.Errorf("ping scale: %q", b[0])
	}
	axis := strings.Split(v, "\n")[47]
	for _, want := range []string{" -2m ", " -1m ", " now "} {
		if !strings.Contains(axis, want) {
			t.Errorf("time axis lacks %q: %q", want, axis)
		}
	}
	// Taller terminals, taller charts. (Models share their panes: each
	// size gets its own.)
	rowsAt := func(h int) int {
		mm := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, h, evs)
		total := 0
		for _, c := range plot.Charts {
			total += len(mm.panes.ChartRows(0, c.ID))
		}
		return total
	}
	if r40, r50, r60 := rowsAt(40), rowsAt(50), rowsAt(60); !(r40 < r50 && r50 < r60) {
		t.Errorf("chart rows should grow with the height: 40 %d, 50 %d, 60 %d", r40, r50, r60)
	}
}

func TestBothPanesAt80x24(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 80, 24, uitest.Scenario(2, 60*time.Second))
	v := plainView(m)
	if !strings.Contains(v, uitest.AddrA) || !strings.Contains(v, uitest.AddrB) || strings.Contains(v, "pane 1/2") {
		t.Fatalf("80x24: both panes should show:\n%s", v)
	}
	for i := range 2 {
		for _, id := range []string{"footprint", "cow", "ops", "ping"} {
			if m.panes.ChartRows(i, id) == nil {
				t.Errorf("80x24: pane %d lacks the %s chart", i, id)
			}
		}
	}
	for _, want := range []string{"last BGSAVE fork ok", "▶ BGSAVE forkless", "█", " now "} {
		if !strings.Contains(v, want) {
			t.Errorf("80x24 lacks %q:\n%s", want, v)
		}
	}
	// A row each: the last save's copy-on-write, the save's progress and
	// its keys processed / total.
	wantFields(t, "80x24", v, "cow", "17.0 MiB", "progress", "98.0%", "keys", "98,000/100,000")
}

func TestFeedingInBatchesDrawsTheSame(t *testing.T) {
	// The columns are added to as samples come; drawn from scratch they
	// must come out the same.
	evs := uitest.Scenario(2, 90*time.Second)
	one := sized(newTestModel(uitest.AddrA, uitest.AddrB), 200, 50)
	nm, _ := one.Update(EventsMsg(evs))
	one = nm.(Model)
	many := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, evs)
	if plainView(one) != plainView(many) {
		t.Errorf("batches of 10 drew\n%s\none batch drew\n%s", plainView(many), plainView(one))
	}
}

func TestCostCurveShowsEverySave(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.TwoSaves())
	m, _ = press(m, "c")
	v := plainView(m)
	if !strings.Contains(v, "save cost curves") || !strings.Contains(v, "Y: copy-on-write") {
		t.Fatalf("c should open the cost view:\n%s", v)
	}
	legend := []string{
		"1 ━━ " + uitest.AddrA + " BGSAVE fork by vkwatch 15:04:15 ok",
		"2 ━━ " + uitest.AddrB + " BGSAVE forkless by schedule (save 60 10000) 15:04:35 ok",
		"3 ━━ " + uitest.AddrA + " BGSAVE fork by vkwatch 15:04:45 ok",
	}
	for _, want := range legend {
		if !strings.Contains(v, want) {
			t.Errorf("legend lacks %q:\n%s", want, v)
		}
	}
	// Each curve ends in its digit on the plot, readable without colour.
	var cells strings.Builder
	for _, l := range strings.Split(v, "\n") {
		if i := strings.IndexAny(l, "┤│"); i > 0 && strings.TrimSpace(l[:i]) == "" || strings.Contains(l, "┤") {
			_, after, _ := strings.Cut(strings.Replace(l, "┤", "│", 1), "│")
			cells.WriteString(after + "\n")
		}
	}
	for _, d := range []string{"1", "2", "3"} {
		if n := strings.Count(cells.String(), d); n != 1 {
			t.Errorf("label %s drawn %d times on the plot, want once:\n%s", d, n, cells.String())
		}
	}
	plot := v
	if !strings.Contains(plot, "0%") || !strings.Contains(plot, "100%") || !strings.Contains(plot, "50%") {
		t.Errorf("no progress axis:\n%s", plot)
	}
	// The forkless save cost no copy-on-write: its peak says 0.
	if l := lineWith(t, m, "2 ━━"); !strings.HasSuffix(l, "peak 0 B") {
		t.Errorf("forkless curve: %q", l)
	}
	if l := lineWith(t, m, "3 ━━"); !strings.Contains(l, "peak 15.7 MiB at 100%") {
		t.Errorf("second fork curve: %q", l)
	}

	m, _ = press(m, "y")
	if v := plainView(m); !strings.Contains(v, "Y: footprint above its level before the save") {
		t.Errorf("y should switch to the footprint:\n%s", v)
	}
	m, _ = press(m, "esc")
	if v := plainView(m); strings.Contains(v, "save cost curves") || !strings.Contains(v, "scales shared") {
		t.Errorf("esc should close the cost view:\n%s", v)
	}
	m, _ = press(m, "c")
	m, _ = press(m, "c")
	if strings.Contains(plainView(m), "save cost curves") {
		t.Errorf("c should close the cost view")
	}
}

func TestCostViewEmptyAndRunning(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 10*time.Second))
	m, _ = press(m, "c")
	if v := plainView(m); !strings.Contains(v, "no save seen yet") {
		t.Errorf("cost view without saves:\n%s", v)
	}
	m = setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, uitest.Scenario(1, 28*time.Second))
	m, _ = press(m, "c")
	if l := lineWith(t, m, "1 ━━"); !strings.Contains(l, "▶ running") {
		t.Errorf("the running save's curve: %q", l)
	}
}

func TestNewKeysInHelp(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, nil)
	m, _ = press(m, "?")
	for _, want := range []string{"c cost", "scales"} {
		if !strings.Contains(plainView(m), want) {
			t.Errorf("full help lacks %q:\n%s", want, plainView(m))
		}
	}
	m, _ = press(m, "?")
	m, _ = press(m, "c")
	if !strings.Contains(plainView(m), "y cow/footprint") || !strings.Contains(plainView(m), "c/esc close") {
		t.Errorf("the cost view's help:\n%s", plainView(m))
	}
}
