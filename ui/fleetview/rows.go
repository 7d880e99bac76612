package fleetview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The fleet view's rows: geometry, the columns, and the drawing of a row.
//
// A row is designed for 80 columns first, two lines a node, so that a
// six-node cluster fits 80x24 with room for the rolling save's lines:
//
//	▸* 1 127.0.0.1:30001 pri     used footprint  ops/s    p99 save
//	                              ⣀⣀⣀⣀⣀⣀    ⣀⣀⣀⣀⣀⣀ ▂▃▂▃▂▂ ⣀⡠⠤⣀⣀⡀
//
// the first line the numbers now and the running save (or the last
// one's cost), the second a small chart of each number over the store's
// window and the node's state (a badge when it is down). Wider terminals
// widen the address, the role, the save column and then the charts, and
// add the rss and cow columns; taller ones give the charts more rows.

// fleetCol is one column of numbers over a chart: an entry of the metric
// table (its values, unit, scale group and colour), with the number the
// row shows.
type fleetCol struct {
	metric   int    // index in metrics
	head     string // the column head
	numW     int    // cells the number takes
	minWidth int    // the terminal width from which the column shows
	tagged   bool   // the number has two instruments: say which, where it fits
	// num is the number the row shows, where it is not the metric's
	// current text (nil: it is).
	num func(s *source.Sample) string
}

// text is the column's number for s.
func (c *fleetCol) text(s *source.Sample) string {
	if c.num != nil {
		return c.num(s)
	}
	return plot.Charts[c.metric].CurrentText(s)
}

// fleetCols are the rows' columns, left to right. A column is one entry
// here; its chart is the metric table's.
var fleetCols = []fleetCol{
	// The byte columns format the int64 itself: the metric's current text
	// goes through its float64 value, which overflows from 2^63-512 bytes.
	{metric: plot.Index("used"), head: "used", numW: 8,
		num: func(s *source.Sample) string { return text.OptBytes(s.Info.UsedMemory) }},
	{metric: plot.Index("footprint"), head: "footprint", numW: 9, tagged: true,
		num: func(s *source.Sample) string { return text.OptBytes(s.Footprint) }},
	{metric: plot.Index("rss"), head: "rss", numW: 8, minWidth: 140,
		num: func(s *source.Sample) string { return text.OptBytes(s.Info.RSS) }},
	{metric: plot.COWChart, head: "cow", numW: 8, minWidth: 170, tagged: true},
	{metric: plot.Index("ops"), head: "ops/s", numW: 6},
	// The number is the p99 of the last 10 s; the chart, as in a pane,
	// the worst PING of each column.
	{metric: plot.PingChart, head: "p99", numW: 6,
		num: func(s *source.Sample) string {
			if s.Ping10s.Count == 0 {
				return text.NA
			}
			return text.Latency(s.Ping10s.P99)
		}},
}

// Fleet view geometry.
const (
	HeadLines      = 3 // the fleet's line, the summary and the column heads
	fleetRollLines = 2 // kept for the rolling save at the bottom, so rows do not jump when one starts
	maxRowChartH   = 3
	minRowChartW   = 4
)

// fleetGeo is how the rows lay out in the view's size.
type fleetGeo struct {
	gen                         int // changes with the geometry, for the row caches
	width                       int
	shardW, addrW, roleW, saveW int
	leftW                       int   // cursor, shard, address and role, with their gaps
	cols                        []int // indexes in fleetCols, left to right
	colW                        []int // their widths (the gap after each not counted)
	chartW, chartH              int
	rowsFit                     int // rows on screen at once
	rowsFor                     int // rows laid out for
}

// fleetGeoFor lays rows out in w x h for rows rows of shards shards.
func fleetGeoFor(w, h, rows, shards int) fleetGeo {
	g := fleetGeo{width: w, shardW: 2, addrW: 15, roleW: 3, saveW: 23}
	if shards >= 10 {
		g.shardW = 3
	}
	extra := w - 80
	if extra < 0 {
		// Narrower than 80: the save column gives way, then the address.
		cut := min(-extra, g.saveW-14)
		g.saveW, extra = g.saveW-cut, extra+cut
		cut = min(max(-extra, 0), g.addrW-11)
		g.addrW, extra = g.addrW-cut, extra+cut
	}
	grow := func(n *int, by int) {
		d := min(max(extra, 0), by)
		*n, extra = *n+d, extra-d
	}
	grow(&g.addrW, 6) // 255.255.255.255:65535
	if extra >= 4 {
		g.roleW, extra = 7, extra-4
	}
	grow(&g.saveW, 13)
	for i, c := range fleetCols {
		if w >= c.minWidth {
			g.cols = append(g.cols, i)
		}
	}
	g.leftW = 2 + g.shardW + g.addrW + 1 + g.roleW + 1
	avail := w - g.leftW - g.saveW
	need := func(cw int) int {
		n := 0
		for _, i := range g.cols {
			n += max(fleetCols[i].numW, cw) + 1
		}
		return n
	}
	g.chartW = minRowChartW
	for need(g.chartW+1) <= avail {
		g.chartW++
	}
	for _, i := range g.cols {
		g.colW = append(g.colW, max(fleetCols[i].numW, g.chartW))
	}
	g.saveW += max(avail-need(g.chartW), 0)
	area := h - HeadLines - fleetRollLines
	g.chartH = min(max(area/max(rows, 1)-1, 1), maxRowChartH)
	g.rowsFit = max(area/(1+g.chartH), 1)
	return g
}

// SetSize gives the view the terminal's width and the body's height.
func (f *Model) SetSize(w, h int) {
	if f.width == w && f.height == h && f.geo.gen != 0 && len(f.rows) == f.geo.rowsFor {
		return
	}
	f.width, f.height = w, h
	gen := f.geo.gen + 1
	f.geo = fleetGeoFor(w, h, len(f.rows), len(f.top.Shards))
	f.geo.gen = gen
	f.geo.rowsFor = len(f.rows)
}

// rowCharts are a row's small charts, drawn only when their columns or
// scale changed.
type rowCharts struct {
	plot.PlotSet
	plots [][]string // painted rows, by metric index
	w, h  int
	ok    bool
	gen   uint64 // counts redraws, for the row's text cache
}

// rowKey is what a row's cached lines were drawn for.
type rowKey struct {
	version  uint64
	gen      uint64
	geo      int
	sel      bool
	mark     bool
	first    bool // first of its shard in shard order: shows the shard number
	sort     sortKey
	roll     string
	gone     bool
	node     source.TopologyNode
	shard    int
	slots    string // the shard's slots, under a primary's address
	primAddr string
}

// refresh brings every row's columns up to date with the store, sorts
// the rows and draws the charts of those on screen.
func (f *Model) Refresh(st *style.Styles, s *store.Store, now, window time.Duration, c plot.Cadence, perRow bool) {
	if len(f.rows) != f.geo.rowsFor {
		f.SetSize(f.width, f.height) // rows joined: the charts' height may change
	}
	f.order(s)
	f.follow()
	for _, r := range f.rows {
		r.Fill(s.View(r.id), now, window, c, f.geo.chartW)
	}
	tops := f.tops(perRow, now)
	for _, r := range f.visible() {
		r.drawCharts(st, &f.geo, tops[r])
	}
}

// visible returns the rows on screen, in display order.
func (f *Model) visible() []*fleetRow {
	end := min(f.scroll+f.geo.rowsFit, len(f.shown))
	if f.scroll >= end {
		return nil
	}
	return f.shown[f.scroll:end]
}

// tops is each row's scale top per metric: by default the largest value
// of the metric's scale group over every row and every column shown (the
// same memory is drawn at the same height in every row), or over the row
// alone (s). NaN where there is nothing to scale.
func (f *Model) tops(perRow bool, now time.Duration) map[*fleetRow][]float64 {
	shown := make([]bool, len(plot.Charts))
	for _, i := range f.geo.cols {
		shown[fleetCols[i].metric] = true
	}
	cols := make([]*plot.Columns, len(f.rows))
	for j, r := range f.rows {
		cols[j] = &r.Columns
	}
	tops := plot.ScaleTops(cols, shown, perRow, f.holds, now)
	out := make(map[*fleetRow][]float64, len(f.rows))
	for j, r := range f.rows {
		out[r] = tops[j]
	}
	return out
}

// drawCharts draws the row's charts that changed (columns or scale).
func (r *fleetRow) drawCharts(st *style.Styles, g *fleetGeo, tops []float64) {
	c := &r.charts
	if c.plots == nil {
		c.plots = make([][]string, len(plot.Charts))
	}
	all := !c.ok || c.w != g.chartW || c.h != g.chartH
	c.ok, c.w, c.h = true, g.chartW, g.chartH
	changed := false
	for _, ci := range g.cols {
		i := fleetCols[ci].metric
		rows, ok := c.PlotSet.Draw(&r.Columns, i, g.chartW, g.chartH, tops[i], all, st.ASCII)
		if !ok {
			continue
		}
		changed = true
		c.plots[i] = c.plots[i][:0]
		for _, row := range rows {
			c.plots[i] = append(c.plots[i], st.Series[i].R(row))
		}
	}
	if changed {
		c.gen++
	}
}

// rowLines returns the row's lines, drawing them when anything they show
// changed.
func (f *Model) rowLines(st *style.Styles, prog progress.Model, s *store.Store, r *fleetRow, first bool) []string {
	v := s.View(r.id)
	k := rowKey{version: v.Version, gen: r.charts.gen, geo: f.geo.gen, sel: r.id == f.sel, mark: f.marked[r.id],
		first: first, sort: f.sort, roll: f.rollStep(r.id), gone: r.gone, node: r.node, shard: r.shard}
	if r.shard < len(f.top.Shards) {
		k.slots = source.SlotsText(f.top.Shards[r.shard].Slots)
	}
	if p := f.byID[r.node.Primary]; p != nil {
		k.primAddr = p.addr()
	}
	if r.lines != nil && r.key == k {
		return r.lines
	}
	r.key = k
	r.lines = f.drawRow(st, prog, v, r, k)
	return r.lines
}

// drawRow draws a row: its text line, then its chart lines.
func (f *Model) drawRow(st *style.Styles, prog progress.Model, v store.View, r *fleetRow, k rowKey) []string {
	g := &f.geo
	s := v.Latest
	var b strings.Builder
	cursor, mark := " ", " "
	if k.sel {
		cursor = st.Top.R("▸")
	}
	if k.mark {
		mark = st.Warn.R("*")
	}
	b.WriteString(cursor + mark)
	shard := strconv.Itoa(r.shard + 1)
	if f.sort == sortShard && !k.first {
		shard = "└"
	}
	b.WriteString(st.Dim.R(text.PadRight(shard, g.shardW)))
	addrPaint := st.Addr
	switch {
	case r.gone:
		addrPaint = st.Dim
	case v.State == store.Disconnected:
		addrPaint = st.Err
	}
	b.WriteString(addrPaint.R(text.PadRight(ansi.Truncate(r.addr(), g.addrW, "…"), g.addrW)) + " ")
	b.WriteString(st.Value.R(text.PadRight(roleText(r.node.Role, s, g.roleW), g.roleW)) + " ")
	for j, ci := range g.cols {
		num := text.NA
		c := &fleetCols[ci]
		if s != nil {
			num = c.text(s)
			if tag, _ := plot.Charts[c.metric].From(s); c.tagged && tag != "" && num != "idle" && num != text.NA && len(num)+1+len(tag) <= g.colW[j] {
				num += " " + st.Dim.R(tag)
			}
		}
		b.WriteString(st.Value.R(text.FitRight(num, g.colW[j])) + " ")
	}
	l1, l2 := rowSave(st, prog, v, g.saveW)
	b.WriteString(text.FitCells(l1, g.saveW))
	out := []string{b.String()}
	for y := range g.chartH {
		b.Reset()
		info := ""
		if y == 0 {
			info = f.rowInfo(st, v, r, k)
		}
		b.WriteString("  " + text.FitCells(info, g.leftW-2))
		for j, ci := range g.cols {
			i := fleetCols[ci].metric
			plot := strings.Repeat(" ", g.chartW)
			if p := r.charts.plots[i]; y < len(p) {
				plot = p[y]
			}
			b.WriteString(strings.Repeat(" ", g.colW[j]-g.chartW) + plot + " ")
		}
		if y == 0 {
			b.WriteString(text.FitCells(l2, g.saveW))
		} else {
			b.WriteString(strings.Repeat(" ", g.saveW))
		}
		out = append(out, b.String())
	}
	return out
}

// roleText is a node's role in w cells: the topology's, else INFO's.
func roleText(role string, s *source.Sample, w int) string {
	if role == "" && s != nil {
		role = source.RoleOf(s.Info.Role)
	}
	switch {
	case role == "":
		return text.NA
	case w < len(role):
		return role[:min(3, len(role))]
	}
	return role
}

// rowInfo is the note under a node's address: a badge when it is down,
// not answering, failed in the cluster's eyes or gone; else where it
// stands in a rolling save, who started the save it runs, or what it is
// (its slots, its primary, its version).
func (f *Model) rowInfo(st *style.Styles, v store.View, r *fleetRow, k rowKey) string {
	switch {
	case r.gone:
		return st.Dim.R("gone: no longer in the fleet")
	case v.State == store.Disconnected && v.Stalled:
		return st.Err.R("✗ " + v.Reason)
	case v.State == store.Disconnected:
		if why := "✗ down: " + badgeReason(v.Reason); len(why) <= f.geo.leftW-2 {
			return st.Err.R(why)
		}
		return st.Err.R("✗ " + badgeReason(v.Reason))
	case r.node.Health == source.HealthFailed:
		return st.Err.R("✗ failed (cluster)")
	case v.State == store.Connecting:
		return st.Warn.R("connecting…")
	case k.roll != "":
		return st.Warn.R(k.roll)
	case r.node.Health == source.HealthLoading:
		return st.Warn.R("loading (cluster)")
	}
	if s := v.Latest; s != nil && s.Save != nil && s.Save.Trigger.Kind != "" && s.Save.Trigger.Kind != source.TriggerUser {
		return st.Warn.R("▶ by " + words.Trigger(s.Save.Trigger))
	}
	switch {
	case r.node.Role == source.RoleReplica && k.primAddr != "":
		return st.Dim.R("of " + k.primAddr)
	case r.node.Role == source.RolePrimary && k.slots != "":
		return st.Dim.R("slots " + k.slots)
	}
	if v.Identity != nil {
		name := v.Identity.ServerName
		if name == "" {
			name = "redis"
		}
		return st.Dim.R(name + " " + v.Identity.Version)
	}
	return ""
}

// badgeReason is the end of an error, what a badge has room for: "connect:
// connection refused" reads as "connection refused" (the pane and the
// footer have the whole text).
func badgeReason(err string) string {
	if i := strings.LastIndex(err, ": "); i >= 0 && i+2 < len(err) {
		return err[i+2:]
	}
	return text.OrNA(err)
}

// rowSave is the save column's two lines: the running save (progress,
// ETA, the live copy-on-write and its instrument, the bar), or the last
// save's kind, status, duration and fork pause over its copy-on-write.
func rowSave(st *style.Styles, prog progress.Model, v store.View, w int) (string, string) {
	if s := v.Latest; s != nil && s.Save != nil {
		sv := s.Save
		frac, fok := sv.Fraction().Get()
		pct := text.NA
		if fok {
			pct = fmt.Sprintf("%.0f%%", frac*100)
		}
		l1 := st.Warn.R("▶ "+words.ShortKind(sv.Kind)) + " " + st.Value.R(pct) + st.Label.R(" ETA ") + st.Value.R(text.OptElapsed(sv.ETA))
		cow := st.Label.R("cow ") + st.Value.R(text.OptBytes(s.COW))
		if tag, _ := plot.Charts[plot.COWChart].From(s); tag != "" {
			cow += " " + st.Dim.R(tag)
		}
		l2 := cow
		if room := w - lipgloss.Width(cow) - 1; fok && room >= 4 {
			prog.Width = room
			l2 = prog.ViewAs(frac) + " " + cow
		}
		return l1, l2
	}
	r := v.Report
	if r == nil {
		return st.Dim.R("no save seen yet"), words.NextCell(st, v)
	}
	l1 := st.Value.R(words.ShortKind(r.Kind))
	if r.Status != "ok" {
		l1 += " " + words.Status(st, r)
	}
	l1 += " " + st.Value.R(text.Elapsed(r.Observed))
	if r.ForkPause.OK {
		l1 += st.Label.R(" pause ") + st.Value.R(text.Latency(r.ForkPause.V))
	}
	l2 := st.Label.R("cow ") + st.Value.R(text.OptBytes(r.COW))
	if next := " " + words.NextCell(st, v); lipgloss.Width(l2+next) <= w {
		l2 += next
	} else if peak := st.Label.R(" peak ") + st.Value.R(text.OptBytes(r.PeakCOW)); r.PeakCOW.OK && lipgloss.Width(l2+peak) <= w {
		l2 += peak
	}
	return l1, l2
}

// view returns the fleet view's lines: the fleet's line, the column
// heads, the rows on screen, and the rolling save's lines at the bottom.
func (f *Model) view(st *style.Styles, prog progress.Model, s *store.Store, perRow bool) []string {
	out := make([]string, 0, f.height)
	out = append(out, text.FitCells(f.headLine(st, s, perRow), f.width), text.FitCells(f.summaryLine(st, s), f.width), f.colHeads(st))
	for i, r := range f.visible() {
		at := f.scroll + i
		first := at == 0 || f.shown[at-1].shard != r.shard
		out = append(out, f.rowLines(st, prog, s, r, first)...)
	}
	roll := f.rollLines(st, s)
	for len(out) < f.height-len(roll) {
		out = append(out, "")
	}
	return append(out[:min(len(out), max(f.height-len(roll), 0))], roll...)
}

// summaryLine is the fleet in one line: how many nodes are up, down,
// saving or gone, what the nodes up cost their hosts in all (footprint),
// and the slowest PING p99 of the last 10 s (the sort by latency says
// where).
func (f *Model) summaryLine(st *style.Styles, s *store.Store) string {
	var up, down, saving, gone int
	var total int64
	var worst time.Duration
	for _, r := range f.rows {
		v := s.View(r.id)
		if l := v.Latest; l != nil && !r.gone && v.State != store.Disconnected {
			total += l.Footprint.Or(0)
			if l.Ping10s.Count > 0 && l.Ping10s.P99 > worst {
				worst = l.Ping10s.P99
			}
		}
		switch {
		case r.gone:
			gone++
		case v.State == store.Disconnected:
			down++
		default:
			up++
		}
		if !r.gone && v.Latest != nil && v.Latest.Save != nil {
			saving++
		}
	}
	sep := st.Dim.R(" · ")
	out := st.Value.R(fmt.Sprintf("%d up", up))
	if down > 0 {
		out += st.Label.R(", ") + st.Err.R(fmt.Sprintf("%d down", down))
	}
	if saving > 0 {
		out += st.Label.R(", ") + st.Warn.R(fmt.Sprintf("%d saving", saving))
	}
	if gone > 0 {
		out += st.Label.R(", ") + st.Dim.R(fmt.Sprintf("%d gone", gone))
	}
	out += sep + st.Label.R("footprint ") + st.Value.R(text.Bytes(total))
	if worst > 0 {
		out += sep + st.Label.R("worst p99 ") + st.Value.R(text.Latency(worst))
	}
	return out
}

// headLine is the fleet's line: the PING interval in force, the filter,
// the sort, and which rows show.
func (f *Model) headLine(st *style.Styles, s *store.Store, perRow bool) string {
	sep := st.Dim.R(" · ")
	// The parts in the order they read, each with a rank: where the line
	// is short, the least needed go first (a default scale mark before
	// the sort, before a failed rediscovery).
	parts := []text.Part{{Text: st.Value.R(f.pingNote())}}
	switch {
	case f.editing:
		parts = append(parts, text.Part{Text: st.Warn.R("/"+inert.Text(f.filter)+"▏") + st.Dim.R(" (enter keeps, esc clears)")})
	case f.filter != "":
		parts = append(parts, text.Part{Text: st.Warn.R(fmt.Sprintf("filter %q: %d of %d", inert.Text(f.filter), len(f.shown), len(f.rows))) + st.Dim.R(" (esc clears)")})
	}
	if n := len(f.shown); n > f.geo.rowsFit {
		parts = append(parts, text.Part{Text: st.Warn.R(fmt.Sprintf("rows %d-%d of %d", f.scroll+1, min(f.scroll+f.geo.rowsFit, n), n)), Rank: 1})
	}
	parts = append(parts, text.Part{Text: st.Label.R("sorted by ") + st.Value.R(sortNames[f.sort]) +
		st.Dim.R(" (o: "+sortNames[(f.sort+1)%sortKey(len(sortNames))]+")"), Rank: 3})
	if perRow {
		parts = append(parts, text.Part{Text: st.Warn.R("scales per row") + st.Dim.R(" (s: shared)"), Rank: 2})
	} else {
		parts = append(parts, text.Part{Text: st.Value.R("scales shared") + st.Dim.R(" (s: per row)"), Rank: 4})
	}
	if f.top.Err != "" {
		parts = append(parts, text.Part{Text: st.Err.R("✗ rediscovery: " + f.top.Err), Rank: 1})
	}
	join := func(maxRank int) string {
		var keep []string
		for _, p := range parts {
			if p.Rank <= maxRank {
				keep = append(keep, p.Text)
			}
		}
		return strings.Join(keep, sep)
	}
	for r := 4; r > 0; r-- {
		if out := join(r); lipgloss.Width(out) <= f.width {
			return out
		}
	}
	return join(0)
}

// colHeads is the line of column heads; the sorted column is marked ▼.
func (f *Model) colHeads(st *style.Styles) string {
	g := &f.geo
	sorted := map[sortKey]string{sortMemory: "footprint", sortOps: "ops/s", sortLatency: "p99", sortSave: "save"}[f.sort]
	mark := func(h string) string {
		if h == sorted {
			return h + "▼"
		}
		return h
	}
	var b strings.Builder
	b.WriteString("  " + text.PadRight("#", g.shardW) + text.PadRight("node", g.addrW+1) + text.PadRight("role", g.roleW+1))
	for j, ci := range g.cols {
		b.WriteString(text.FitRight(mark(fleetCols[ci].head), g.colW[j]) + " ")
	}
	b.WriteString(mark("save"))
	return st.Label.R(text.FitCells(b.String(), f.width))
}

// rollLines are the rolling save's lines: its plan waiting for B again,
// its progress (n of m, ETA, what it does or waits for), or how it ended.
func (f *Model) rollLines(st *style.Styles, s *store.Store) []string {
	if f.Roll() == nil {
		return nil
	}
	p := f.Roll().Progress()
	steps := f.Roll().Steps()
	var l1, l2 string
	switch p.State {
	case roll.Planned:
		if len(steps) == 0 {
			return []string{st.Warn.R("rolling save: no node to save")}
		}
		l1 = st.Warn.R(fmt.Sprintf("rolling BGSAVE of %d node%s, one per shard, %d at a time, never 2 on one host:",
			len(steps), plural(len(steps)), max(f.drive.Config().MaxParallel, 1)))
		l2 = f.rollPlanLine(st, s, steps)
	case roll.Running, roll.Held:
		l1 = st.Warn.R("rolling save") + st.Value.R(fmt.Sprintf(" %d of %d saved", p.Done, p.Total)) +
			st.Label.R(" · ETA ") + st.Value.R(rollETA(p)) + st.Dim.R(" · esc cancels the rest")
		l2 = f.rollRunningLine(st, p, steps)
	case roll.Cancelling:
		l1 = st.Warn.R(fmt.Sprintf("rolling save cancelled at %d of %d: the save running finishes, the rest are not started", p.Done, p.Total))
	case roll.Done:
		l1 = f.rollDoneLine(st, p, steps)
	case roll.Failed:
		l1 = st.Err.R(fmt.Sprintf("✗ rolling save stopped at %d of %d: %s", p.Done, p.Total, p.Err))
		l2 = st.Dim.R("the nodes after it were not started · esc clears this")
	case roll.Cancelled:
		l1 = st.Warn.R(fmt.Sprintf("rolling save cancelled after %d of %d saved", p.Done, p.Total)) + st.Dim.R(" · esc clears this")
	}
	return text.FitLines(f.width, l1, l2)
}

// rollPlanLine lists a planned roll's nodes, each with its forecast and
// headroom (the check the roll makes again before it starts the node)
// where the width holds them all; else the nodes alone, which the rows'
// save column gives the forecasts of.
func (f *Model) rollPlanLine(st *style.Styles, s *store.Store, steps []roll.Step) string {
	names := make([]string, len(steps))
	plain := make([]string, len(steps))
	for i, step := range steps {
		plain[i] = fmt.Sprintf("%d: %s", i+1, step.Node.Addr)
		names[i] = plain[i]
		if c := words.NextCell(st, s.Live(step.Node.ID)); c != "" {
			names[i] += " " + strings.TrimPrefix(ansi.Strip(c), "next ")
		}
	}
	l := strings.Join(names, "  ")
	if ansi.StringWidth(l) > f.width {
		l = strings.Join(plain, "  ")
	}
	return st.Value.R(l)
}

// rollRunningLine says what a running roll does: the nodes saving (or the
// memory check holding it), what it waits for and the node next.
func (f *Model) rollRunningLine(st *style.Styles, p roll.Progress, steps []roll.Step) string {
	var now, next []string
	for _, id := range p.Running {
		now = append(now, f.nodeAddr(id))
	}
	for _, s := range steps {
		if s.State == roll.StepWaiting && len(next) == 0 {
			next = append(next, s.Node.Addr)
		}
	}
	var parts []string
	switch {
	case p.State == roll.Held:
		parts = append(parts, st.Err.R("held by the memory check: "+f.HeldWarning()+" · B: save it anyway, esc: cancel"))
	case len(now) > 0:
		parts = append(parts, st.Label.R("saving ")+st.Value.R(strings.Join(now, ", ")))
	}
	// What the roll waits for, unless it is its own save (said above).
	if p.Waiting != "" && (len(now) == 0 || strings.Contains(p.Waiting, "(not vkwatch's)")) && p.State != roll.Held {
		parts = append(parts, st.Label.R("waiting for ")+st.Value.R(p.Waiting))
	}
	if len(next) > 0 && p.State != roll.Held {
		parts = append(parts, st.Label.R("next ")+st.Value.R(next[0]))
	}
	return strings.Join(parts, st.Dim.R(" · "))
}

// nodeAddr is a node's address as its row shows it, else its ID made
// inert.
func (f *Model) nodeAddr(id source.NodeID) string {
	if r := f.byID[id]; r != nil {
		return r.addr()
	}
	return inert.Text(string(id))
}

// rollDoneLine says a roll finished: how many saved, in how long.
func (f *Model) rollDoneLine(st *style.Styles, p roll.Progress, steps []roll.Step) string {
	l := st.OK.R(fmt.Sprintf("rolling save done: %d of %d saved", p.Done, p.Total))
	var last time.Duration
	for _, s := range steps {
		last = max(last, s.Ended)
	}
	if last > f.drive.Started() {
		l += st.OK.R(" in " + text.Elapsed(last-f.drive.Started()))
	}
	return l + st.Dim.R(" · r: the reports · esc clears this")
}

// rollETA renders the roll's ETA; none before the first save is done.
func rollETA(p roll.Progress) string {
	if d, ok := p.ETA.Get(); ok {
		return text.Elapsed(d)
	}
	return "after the first save"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
