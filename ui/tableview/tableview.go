// Package tableview is the reports table (key r): one row per save
// report, oldest first, so a column reads down as one measure across
// saves and servers: a fork save on one server and a forkless one on the
// other compare cell by cell.
// A row is two lines: the columns go in pairs, one above the other
// (tableStacks), so that every figure of a save shows on a terminal of
// 180 columns, where one line a save would need twice that.
package tableview

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/words"
)

// Chrome is the lines of the reports view besides its rows: the
// title line, the legend, and the table's top border, two lines of heads,
// the heads' rule and the bottom border.
const Chrome = 2 + 5

// rowLines is the lines a report takes.
const rowLines = 2

// cellPad is the padding of a cell, left and right.
const cellPad = 1

// reportColumn is one column of the reports table.
type reportColumn struct {
	head string
	// rank orders the columns by how much they matter: when the terminal is
	// too narrow for all of them, the highest ranks go first.
	rank int
	cell func(st *style.Styles, r *source.SaveReport) string
}

// reportColumns are the table's columns, in display order.
var reportColumns = []reportColumn{
	{"started", 22, func(_ *style.Styles, r *source.SaveReport) string {
		if r.StartedAt.IsZero() {
			return text.NA
		}
		return r.StartedAt.Format("15:04:05")
	}},
	{"server", 1, func(_ *style.Styles, r *source.SaveReport) string { return text.OrNA(r.Addr) }},
	// The kind and who started it in a word each (fork, forkless, aof;
	// vkwatch, schedule, replica): the pane and the cost view say more.
	{"kind", 2, func(_ *style.Styles, r *source.SaveReport) string { return words.ShortKind(r.Kind) }},
	{"by", 4, func(_ *style.Styles, r *source.SaveReport) string { return text.OrNA(string(r.Trigger.Kind)) }},
	{"status", 3, func(st *style.Styles, r *source.SaveReport) string { return words.Status(st, r) }},
	{"took", 5, func(_ *style.Styles, r *source.SaveReport) string { return words.ServerSecs(r.ServerSeconds) }},
	{"observed", 13, func(_ *style.Styles, r *source.SaveReport) string { return words.Observed(r) }},
	{"fork pause", 9, func(_ *style.Styles, r *source.SaveReport) string { return words.NoneShort(words.Pause(r)) }},
	{"cow", 6, func(_ *style.Styles, r *source.SaveReport) string { return words.NoneShort(words.COW(r)) }},
	{"forecast", 22, func(_ *style.Styles, r *source.SaveReport) string {
		if v, ok := r.ForecastCOW.Get(); ok {
			return text.Bytes(v) + " " + words.ShortBasis(forecast.Basis(r.ForecastBasis))
		}
		return text.NA
	}},
	{"fc error", 23, func(_ *style.Styles, r *source.SaveReport) string { return text.OrNA(words.ForecastCheck(r)) }},
	{"cow peak", 14, func(_ *style.Styles, r *source.SaveReport) string {
		if r.COWFrom == source.FromNoChild {
			return "none"
		}
		return text.OptBytes(r.PeakCOW)
	}},
	{"peak at", 7, func(_ *style.Styles, r *source.SaveReport) string {
		if f, ok := r.PeakProgress().Get(); ok {
			return fmt.Sprintf("%.0f%%", f*100)
		}
		return text.NA
	}},
	{"INFO peak", 21, func(_ *style.Styles, r *source.SaveReport) string { return text.OptBytes(r.PeakLiveCOW) }},
	{"footprint +", 8, func(_ *style.Styles, r *source.SaveReport) string { return text.OptDelta(r.PeakFootprintDelta) }},
	{"used +", 12, func(_ *style.Styles, r *source.SaveReport) string { return text.OptDelta(r.PeakUsedDelta) }},
	{"rss +", 15, func(_ *style.Styles, r *source.SaveReport) string { return text.OptDelta(r.PeakRSSDelta) }},
	{"/proc rss +", 20, func(_ *style.Styles, r *source.SaveReport) string { return text.OptDelta(r.PeakProcRSSDelta) }},
	{"/proc peak", 17, func(_ *style.Styles, r *source.SaveReport) string { return text.OptBytes(r.PeakChildPrivateDirty) }},
	{"ops/s", 11, func(_ *style.Styles, r *source.SaveReport) string { return ratePair(r.OpsBefore, r.OpsDuring) }},
	{"writers/s", 19, func(_ *style.Styles, r *source.SaveReport) string {
		return ratePair(r.WriterOpsBefore, r.WriterOpsDuring)
	}},
	{"ping p50", 18, func(_ *style.Styles, r *source.SaveReport) string {
		return pingPair(r.PingBefore, r.PingDuring, func(l source.Latency) string { return text.Latency(l.P50) })
	}},
	{"ping p99", 16, func(_ *style.Styles, r *source.SaveReport) string {
		return pingPair(r.PingBefore, r.PingDuring, func(l source.Latency) string { return text.Latency(l.P99) })
	}},
	{"ping max", 10, func(_ *style.Styles, r *source.SaveReport) string {
		return pingPair(r.PingBefore, r.PingDuring, func(l source.Latency) string { return text.Latency(l.Max) })
	}},
	{"blocked", 24, func(_ *style.Styles, r *source.SaveReport) string { return text.OptCount(r.BlockedWriters()) }},
}

// tableStacks are the columns shown one above the other, by head: the
// first of each pair on a row's first line, the second under it. A
// column in no pair has a place of its own, after the column before it.
var tableStacks = [][2]string{
	{"started", "server"}, {"kind", "by"}, {"status", "fork pause"}, {"took", "observed"},
	{"cow", "cow peak"}, {"forecast", "fc error"}, {"peak at", "INFO peak"}, {"footprint +", "used +"},
	{"rss +", "/proc rss +"}, {"/proc peak", "ping max"}, {"ops/s", "writers/s"}, {"ping p50", "ping p99"},
}

// tableLegend says how to read the cells; the heads are too short to.
const tableLegend = "took: as the server says (rdb_last_bgsave_time_sec) · fork pause: latest_fork_usec · " +
	"cow: rdb_last_cow_size; cow peak: as charted, peak at: the save's progress then; INFO peak: current_cow_size; " +
	"/proc peak: the child's copied pages · +: highest above the level before the save · a → b: before → during · " +
	"forecast: made before the save · none: forkless, no fork and no child · " +
	"blocked: writers the save held up (blocked_clients, above its level outside the save)"

// ratePair renders "before → during", or one n/a when neither is known.
func ratePair(before, during source.Opt[float64]) string {
	if !before.OK && !during.OK {
		return text.NA
	}
	return text.OptRate(before) + " → " + text.OptRate(during)
}

// pingPair renders one PING statistic before → during; a side without
// PINGs is n/a.
func pingPair(before, during source.Latency, f func(source.Latency) string) string {
	if before.Count == 0 && during.Count == 0 {
		return text.NA
	}
	side := func(l source.Latency) string {
		if l.Count == 0 {
			return text.NA
		}
		return f(l)
	}
	return side(before) + " → " + side(during)
}

// Model is the reports view's component (r): its keys, where it
// is scrolled, and its drawing, cached like a pane's box.
type Model struct {
	Reports key.Binding // opens and closes the table
	Up      key.Binding // an older report
	Down    key.Binding
	Scroll  key.Binding // help only: up and down in one entry

	// top is the first report shown; follow keeps the newest in view as
	// reports arrive, until the user scrolls up.
	top    int
	follow bool
	width  int
	rows   int // reports that fit

	lines []string
	key   tableKey
	ok    bool
}

// New returns the reports view's component.
func New() *Model {
	return &Model{
		Reports: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reports")),
		Up:      key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "older report")),
		Down:    key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "newer report")),
		Scroll:  key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
	}
}

// SetSize implements view.Component.
func (t *Model) SetSize(w, h int) { t.width, t.rows = w, Rows(h) }

// Toggle implements view.Component.
func (t *Model) Toggle() *key.Binding { return &t.Reports }

// Opened is told the table opened: it opens on the newest reports and
// follows them as more arrive.
func (t *Model) Opened() { t.follow = true }

// SyncKeys implements view.Component: the arrows scroll while the table is
// open, and r says it closes it.
func (t *Model) SyncKeys(o view.Open) {
	view.SyncToggle(o, &t.Reports, "reports", &t.Up, &t.Down, &t.Scroll)
}

// Update implements view.Component: the arrows scroll.
func (t *Model) Update(c *view.Context, msg tea.Msg) (bool, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, t.Up):
		t.scroll(-1, c.Store.ShownReports(), t.rows)
	case key.Matches(k, t.Down):
		t.scroll(1, c.Store.ShownReports(), t.rows)
	default:
		return false, nil
	}
	return true, nil
}

// ShortHelp implements view.Component: the table's keys first, the save keys
// after quit.
func (t *Model) ShortHelp(h view.HelpKeys) []key.Binding {
	g := h.Keys
	return []key.Binding{t.Reports, t.Scroll, g.Pause, h.Toggles[view.Help], g.Quit, g.Save, g.Rewrite, g.Both, h.Next}
}

// FullHelp implements view.Component.
func (t *Model) FullHelp() []key.Binding { return []key.Binding{t.Reports, t.Up, t.Down} }

// View implements view.Component: the reports that had arrived (a paused
// view shows fewer), the panes' place taken; they are not drawn meanwhile.
func (t *Model) View(c *view.Context) []string {
	return t.view(c.Styles, c.Store.Reports()[:c.Store.ShownReports()], t.width, t.rows)
}

// tableKey is what the cached drawing was drawn for.
type tableKey struct {
	width, rows, reports, top int
}

// Rows is how many reports fit in avail lines.
func Rows(avail int) int { return max((avail-Chrome)/rowLines, 1) }

// scroll moves the first shown report by d, within [0, reports-rows].
func (t *Model) scroll(d, reports, rows int) {
	last := max(reports-rows, 0)
	t.top = min(max(t.top+d, 0), last)
	t.follow = t.top == last
}

// view returns the table's lines for reports (the first n of them are
// shown; a paused view shows fewer than have arrived), width cells wide
// and with room for rows reports, drawing only when something changed.
func (t *Model) view(st *style.Styles, reports []source.SaveReport, width, rows int) []string {
	n := len(reports)
	last := max(n-rows, 0)
	if t.follow || t.top > last {
		t.top = last
	}
	k := tableKey{width: width, rows: rows, reports: n, top: t.top}
	if t.ok && t.key == k {
		return t.lines
	}
	t.lines, t.key, t.ok = drawTable(st, reports, width, rows, t.top), k, true
	return t.lines
}

// tableStack is one place of the table: a column, or two one above the
// other, by index in reportColumns (bottom -1: none).
type tableStack struct{ top, bottom int }

// stacks are the table's places in display order.
func stacks() []tableStack {
	at := map[string]int{}
	for j, c := range reportColumns {
		at[c.head] = j
	}
	under := map[int]int{}
	below := map[int]bool{}
	for _, p := range tableStacks {
		t, okT := at[p[0]]
		b, okB := at[p[1]]
		if okT && okB {
			under[t], below[b] = b, true
		}
	}
	var out []tableStack
	for j := range reportColumns {
		switch b, ok := under[j]; {
		case ok:
			out = append(out, tableStack{j, b})
		case !below[j]:
			out = append(out, tableStack{j, -1})
		}
	}
	return out
}

// drawTable draws the title line, the legend and the table of the reports
// from top on, at most rows of them. Column widths come from every report,
// not only the ones shown, so scrolling never makes the columns jump.
func drawTable(st *style.Styles, reports []source.SaveReport, width, rows, top int) []string {
	n := len(reports)
	title := st.Top.R("save reports")
	if n == 0 {
		return text.FitLines(width,
			title+st.Dim.R(" · none yet · r or esc closes"),
			st.Dim.R("a row appears here when a save ends: b or B starts one, or wait for the server's own"))
	}
	end := min(top+rows, n)
	where := fmt.Sprintf(" · %d–%d of %d", top+1, end, n)
	if n > rows {
		where += " · ↑/↓ scroll"
	}
	where += " · r or esc closes"

	cells, places, natural := tableCells(st, reports)
	shown, hidden := fitColumns(places, natural, width)
	widths := make([]int, len(shown))
	for i, k := range shown {
		widths[i] = natural[k]
	}
	shrink(widths, width-(len(shown)+1))

	legend := tableLegend
	if len(hidden) > 0 {
		legend = "hidden at this width: " + strings.Join(hidden, ", ") + " · " + legend
	}
	out := []string{title + st.Dim.R(where), st.Dim.R(legend)}
	out = append(out, tableRule(st, widths, "╭", "┬", "╮"))
	line := func(paint style.Paint, row []string, bottom bool) string {
		var b strings.Builder
		b.WriteString(st.Border.R("│"))
		for i, k := range shown {
			j := places[k].top
			if bottom {
				j = places[k].bottom
			}
			cell := ""
			if j >= 0 {
				cell = row[j]
			}
			b.WriteString(" " + paint.R(text.FitCells(cell, widths[i]-2*cellPad)) + " " + st.Border.R("│"))
		}
		return b.String()
	}
	heads := make([]string, len(reportColumns))
	for j, c := range reportColumns {
		heads[j] = c.head
	}
	out = append(out, line(st.Head, heads, false), line(st.Head, heads, true))
	out = append(out, tableRule(st, widths, "├", "┼", "┤"))
	for i := top; i < end; i++ {
		out = append(out, line(style.Paint{}, cells[i], false), line(style.Paint{}, cells[i], true))
	}
	out = append(out, tableRule(st, widths, "╰", "┴", "╯"))
	return text.FitLines(width, out...)
}

// tableCells are every report's cells, by column, the table's places,
// and the natural width of each place: its widest head or cell.
func tableCells(st *style.Styles, reports []source.SaveReport) ([][]string, []tableStack, []int) {
	cells := make([][]string, len(reports))
	for i := range reports {
		cells[i] = make([]string, len(reportColumns))
		for j, c := range reportColumns {
			cells[i][j] = c.cell(st, &reports[i])
		}
	}
	places := stacks()
	natural := make([]int, len(places))
	for k, p := range places {
		for _, j := range []int{p.top, p.bottom} {
			if j < 0 {
				continue
			}
			natural[k] = max(natural[k], ansi.StringWidth(reportColumns[j].head))
			for i := range cells {
				natural[k] = max(natural[k], ansi.StringWidth(cells[i][j]))
			}
		}
		natural[k] += 2 * cellPad
	}
	return cells, places, natural
}

// tableRule is a border line of the table: left, the joints between the
// columns of widths, right.
func tableRule(st *style.Styles, widths []int, left, mid, right string) string {
	var b strings.Builder
	b.WriteString(left)
	for i, w := range widths {
		if i > 0 {
			b.WriteString(mid)
		}
		b.WriteString(strings.Repeat("─", w))
	}
	b.WriteString(right)
	return st.Border.R(b.String())
}

// fitColumns picks the places to show in width cells: all of them if they
// fit, else the most important ones that do (a place ranks as its better
// column; at least server, kind and status, cut to fit if need be). It
// returns the places shown, by index, in display order, and the heads of
// the columns left out.
func fitColumns(places []tableStack, natural []int, width int) (shown []int, hidden []string) {
	rank := func(p tableStack) int {
		r := reportColumns[p.top].rank
		if p.bottom >= 0 {
			r = min(r, reportColumns[p.bottom].rank)
		}
		return r
	}
	for keep := len(reportColumns); keep >= 3; keep-- {
		shown = shown[:0]
		total := 1 // the left border
		for k, p := range places {
			if rank(p) <= keep {
				shown = append(shown, k)
				total += natural[k] + 1 // the place and the border after it
			}
		}
		if total <= width || keep == 3 {
			break
		}
	}
	hidden = nil
	i := 0
	for k, p := range places {
		if i < len(shown) && shown[i] == k {
			i++
			continue
		}
		hidden = append(hidden, reportColumns[p.top].head)
		if p.bottom >= 0 {
			hidden = append(hidden, reportColumns[p.bottom].head)
		}
	}
	return shown, hidden
}

// shrink narrows the widest columns one cell at a time until the widths
// add up to at most total, and no column below three cells ("x…" plus
// padding): better a cut address than a table wider than the terminal.
func shrink(widths []int, total int) {
	sum := 0
	for _, w := range widths {
		sum += w
	}
	for sum > total {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= 2*cellPad+1 {
			return
		}
		widths[widest]--
		sum--
	}
}
