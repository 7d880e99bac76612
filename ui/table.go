package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
)

// The reports table shows one row per save report, oldest first, so a
// column reads down as one measure across saves and servers: a fork save
// on one server and a forkless one on the other compare cell by cell.
// A row is two lines: the columns go in pairs, one above the other
// (tableStacks), so that every figure of a save shows on a terminal of
// 180 columns, where one line a save would need twice that.

// tableChrome is the lines of the reports view besides its rows: the
// title line, the legend, and the table's top border, two lines of heads,
// the heads' rule and the bottom border.
const tableChrome = 2 + 5

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
	cell func(st *styles, r *source.SaveReport) string
}

// reportColumns are the table's columns, in display order.
var reportColumns = []reportColumn{
	{"started", 22, func(_ *styles, r *source.SaveReport) string {
		if r.StartedAt.IsZero() {
			return na
		}
		return r.StartedAt.Format("15:04:05")
	}},
	{"server", 1, func(_ *styles, r *source.SaveReport) string { return fmtOrNA(r.Addr) }},
	// The kind and who started it in a word each (fork, forkless, aof;
	// vkwatch, schedule, replica): the pane and the cost view say more.
	{"kind", 2, func(_ *styles, r *source.SaveReport) string { return shortKind(r.Kind) }},
	{"by", 4, func(_ *styles, r *source.SaveReport) string { return fmtOrNA(string(r.Trigger.Kind)) }},
	{"status", 3, func(st *styles, r *source.SaveReport) string { return reportStatus(st, r) }},
	{"took", 5, func(_ *styles, r *source.SaveReport) string { return fmtServerSecs(r.ServerSeconds) }},
	{"observed", 13, func(_ *styles, r *source.SaveReport) string { return fmtObserved(r) }},
	{"fork pause", 9, func(_ *styles, r *source.SaveReport) string { return noneShort(reportPause(r)) }},
	{"cow", 6, func(_ *styles, r *source.SaveReport) string { return noneShort(reportCOW(r)) }},
	{"forecast", 22, func(_ *styles, r *source.SaveReport) string {
		if v, ok := r.ForecastCOW.Get(); ok {
			return fmtBytes(v) + " " + shortBasis(forecast.Basis(r.ForecastBasis))
		}
		return na
	}},
	{"fc error", 23, func(_ *styles, r *source.SaveReport) string { return fmtOrNA(forecastCheck(r)) }},
	{"cow peak", 14, func(_ *styles, r *source.SaveReport) string {
		if r.COWFrom == source.FromNoChild {
			return "none"
		}
		return fmtOptBytes(r.PeakCOW)
	}},
	{"peak at", 7, func(_ *styles, r *source.SaveReport) string {
		if f, ok := r.PeakProgress().Get(); ok {
			return fmt.Sprintf("%.0f%%", f*100)
		}
		return na
	}},
	{"INFO peak", 21, func(_ *styles, r *source.SaveReport) string { return fmtOptBytes(r.PeakLiveCOW) }},
	{"footprint +", 8, func(_ *styles, r *source.SaveReport) string { return fmtOptDelta(r.PeakFootprintDelta) }},
	{"used +", 12, func(_ *styles, r *source.SaveReport) string { return fmtOptDelta(r.PeakUsedDelta) }},
	{"rss +", 15, func(_ *styles, r *source.SaveReport) string { return fmtOptDelta(r.PeakRSSDelta) }},
	{"/proc rss +", 20, func(_ *styles, r *source.SaveReport) string { return fmtOptDelta(r.PeakProcRSSDelta) }},
	{"/proc peak", 17, func(_ *styles, r *source.SaveReport) string { return fmtOptBytes(r.PeakChildPrivateDirty) }},
	{"ops/s", 11, func(_ *styles, r *source.SaveReport) string { return ratePair(r.OpsBefore, r.OpsDuring) }},
	{"writers/s", 19, func(_ *styles, r *source.SaveReport) string {
		return ratePair(r.WriterOpsBefore, r.WriterOpsDuring)
	}},
	{"ping p50", 18, func(_ *styles, r *source.SaveReport) string {
		return pingPair(r.PingBefore, r.PingDuring, func(l source.Latency) string { return fmtLatency(l.P50) })
	}},
	{"ping p99", 16, func(_ *styles, r *source.SaveReport) string {
		return pingPair(r.PingBefore, r.PingDuring, func(l source.Latency) string { return fmtLatency(l.P99) })
	}},
	{"ping max", 10, func(_ *styles, r *source.SaveReport) string {
		return pingPair(r.PingBefore, r.PingDuring, func(l source.Latency) string { return fmtLatency(l.Max) })
	}},
	{"blocked", 24, func(_ *styles, r *source.SaveReport) string { return fmtOptCount(r.BlockedWriters()) }},
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

// noneShort is "none" for a cell: the legend says why.
func noneShort(s string) string {
	if strings.HasPrefix(s, "none") {
		return "none"
	}
	return s
}

// ratePair renders "before → during", or one n/a when neither is known.
func ratePair(before, during source.Opt[float64]) string {
	if !before.OK && !during.OK {
		return na
	}
	return fmtOptRate(before) + " → " + fmtOptRate(during)
}

// pingPair renders one PING statistic before → during; a side without
// PINGs is n/a.
func pingPair(before, during source.Latency, f func(source.Latency) string) string {
	if before.Count == 0 && during.Count == 0 {
		return na
	}
	side := func(l source.Latency) string {
		if l.Count == 0 {
			return na
		}
		return f(l)
	}
	return side(before) + " → " + side(during)
}

// reportTable is the reports view's component (r): its keys, where it
// is scrolled, and its drawing, cached like a pane's box.
type reportTable struct {
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

// newReportTable returns the reports view's component.
func newReportTable(viewOpts) component {
	return &reportTable{
		Reports: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reports")),
		Up:      key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "older report")),
		Down:    key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "newer report")),
		Scroll:  key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
	}
}

// SetSize implements component.
func (t *reportTable) SetSize(w, h int) { t.width, t.rows = w, tableRows(h) }

// Toggle implements component.
func (t *reportTable) Toggle() *key.Binding { return &t.Reports }

// opened is told the table opened: it opens on the newest reports and
// follows them as more arrive.
func (t *reportTable) opened() { t.follow = true }

// carry takes over where the old model's table was scrolled.
func (t *reportTable) carry(from component) {
	old := from.(*reportTable)
	t.top, t.follow = old.top, old.follow
}

// SyncKeys implements component: the arrows scroll while the table is
// open, and r says it closes it.
func (t *reportTable) SyncKeys(o openState) {
	on := o.fills
	t.Up.SetEnabled(on)
	t.Down.SetEnabled(on)
	t.Scroll.SetEnabled(on)
	t.Reports.SetHelp("r", "reports")
	if on {
		t.Reports.SetHelp("r/esc", "close")
	}
}

// Update implements component: the arrows scroll.
func (t *reportTable) Update(c *viewCtx, k tea.KeyMsg) (bool, request) {
	switch {
	case key.Matches(k, t.Up):
		t.scroll(-1, c.store.ShownReports(), t.rows)
	case key.Matches(k, t.Down):
		t.scroll(1, c.store.ShownReports(), t.rows)
	default:
		return false, nil
	}
	return true, nil
}

// ShortHelp implements component: the table's keys first, the save keys
// after quit.
func (t *reportTable) ShortHelp(h helpKeys) []key.Binding {
	g := h.g
	return []key.Binding{t.Reports, t.Scroll, g.Pause, h.toggles[viewHelp], g.Quit, g.Save, g.Rewrite, g.Both, h.next}
}

// FullHelp implements component.
func (t *reportTable) FullHelp() []key.Binding { return []key.Binding{t.Reports, t.Up, t.Down} }

// View implements component: the reports that had arrived (a paused
// view shows fewer), the panes' place taken; they are not drawn meanwhile.
func (t *reportTable) View(c *viewCtx) []string {
	return t.view(c.st, c.store.Reports()[:c.store.ShownReports()], t.width, t.rows)
}

// tableKey is what the cached drawing was drawn for.
type tableKey struct {
	width, rows, reports, top int
}

// tableRows is how many reports fit in avail lines.
func tableRows(avail int) int { return max((avail-tableChrome)/rowLines, 1) }

// scroll moves the first shown report by d, within [0, reports-rows].
func (t *reportTable) scroll(d, reports, rows int) {
	last := max(reports-rows, 0)
	t.top = min(max(t.top+d, 0), last)
	t.follow = t.top == last
}

// view returns the table's lines for reports (the first n of them are
// shown; a paused view shows fewer than have arrived), width cells wide
// and with room for rows reports, drawing only when something changed.
func (t *reportTable) view(st *styles, reports []source.SaveReport, width, rows int) []string {
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
func drawTable(st *styles, reports []source.SaveReport, width, rows, top int) []string {
	n := len(reports)
	title := st.top.r("save reports")
	if n == 0 {
		return fitLines(width,
			title+st.dim.r(" · none yet · r or esc closes"),
			st.dim.r("a row appears here when a save ends: b or B starts one, or wait for the server's own"))
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
	out := []string{title + st.dim.r(where), st.dim.r(legend)}
	out = append(out, tableRule(st, widths, "╭", "┬", "╮"))
	line := func(paint paint, row []string, bottom bool) string {
		var b strings.Builder
		b.WriteString(st.border.r("│"))
		for i, k := range shown {
			j := places[k].top
			if bottom {
				j = places[k].bottom
			}
			text := ""
			if j >= 0 {
				text = row[j]
			}
			b.WriteString(" " + paint.r(fitCells(text, widths[i]-2*cellPad)) + " " + st.border.r("│"))
		}
		return b.String()
	}
	heads := make([]string, len(reportColumns))
	for j, c := range reportColumns {
		heads[j] = c.head
	}
	out = append(out, line(st.head, heads, false), line(st.head, heads, true))
	out = append(out, tableRule(st, widths, "├", "┼", "┤"))
	for i := top; i < end; i++ {
		out = append(out, line(paint{}, cells[i], false), line(paint{}, cells[i], true))
	}
	out = append(out, tableRule(st, widths, "╰", "┴", "╯"))
	return fitLines(width, out...)
}

// tableCells are every report's cells, by column, the table's places,
// and the natural width of each place: its widest head or cell.
func tableCells(st *styles, reports []source.SaveReport) ([][]string, []tableStack, []int) {
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
func tableRule(st *styles, widths []int, left, mid, right string) string {
	var b strings.Builder
	b.WriteString(left)
	for i, w := range widths {
		if i > 0 {
			b.WriteString(mid)
		}
		b.WriteString(strings.Repeat("─", w))
	}
	b.WriteString(right)
	return st.border.r(b.String())
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
