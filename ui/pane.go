package ui

import (
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/chart"
)

// A pane is one server's box: what it is and how it is connected in the
// top border, its state, the running save and the last save's cost, then
// its charts, one per entry of the metric table that fits, the marker row
// of saves and gaps, and the time axis in the bottom border. It draws from
// the store's view of its node, so its history is the store's, not its own.
//
// A pane follows soft-serve's component contract as far as it has one:
// SetSize, then drawing (sync, drawCharts, box); it takes no keys.

// Pane geometry.
const (
	paneChrome = 4  // border and padding, left and right
	scaleW     = 9  // the scale right of a plot: "┤" and "12.3 MiB"
	minLabelW  = 24 // "footprint 12.3 MiB proc"
	maxLabelW  = 30
	minPlotW   = 20
	minPaneW   = minLabelW + minPlotW + scaleW + paneChrome
	// The text above the charts: the state line, the block of the save
	// now (the running one, or the next one's forecast) and the last
	// save's block, each a title row and rows of fields. fullText is
	// what they take where there is room: every field of a 100-column
	// pane fits. minText is a row each.
	fullNow  = 4
	fullLast = 6
	fullText = 1 + fullNow + fullLast
	minText  = 1 + 1 + 1
	// minCharts: footprint, cow, ops/s at the least (by rank).
	minCharts = 3
	// minPaneH is a pane with minText, minCharts charts of one row, the
	// marker row and the borders.
	minPaneH = minText + minCharts + 1 + 2
)

// paneForm is how a pane of a given size lays out.
type paneForm struct {
	ok        bool
	now, last int   // rows of the save block and the last save's
	charts    []int // metric indexes shown, in table order
	rows      []int // rows of each shown chart
	labelW    int
	plotW     int
}

// textRows are the rows of a pane's blocks for inner height ih: all
// they can use (fullText) while the charts keep two rows each but one
// (80x24 for one server: seven rows of text, eleven of charts); below
// that, what the charts leave, down to a row each: the least important
// fields go first (the written priority, fields.go). The save block gets
// about a third, the last save's the rest.
func textRows(ih int) (now, last int) {
	keep := 2*len(metrics) - 1
	text := min(max(ih-1-keep, minText), fullText) // 1: the marker row
	rest := text - 1
	now = min(max((rest+1)/3, 1), fullNow)
	last = rest - now
	if last > fullLast {
		now, last = now+last-fullLast, fullLast
	}
	return now, last
}

// formFor lays out a pane of inner size iw x ih: its text blocks
// (textRows), then as many charts as fit, by rank, and every spare row
// to the charts.
func formFor(iw, ih int) paneForm {
	f := paneForm{labelW: min(max(iw*2/7, minLabelW), maxLabelW)}
	f.plotW = iw - f.labelW - scaleW
	if f.plotW < minPlotW || ih < minPaneH-2 {
		return f
	}
	f.ok = true
	f.now, f.last = textRows(ih)
	avail := ih - 1 - f.now - f.last - 1
	n := min(len(metrics), avail)
	byRank := make([]int, len(metrics))
	for i := range byRank {
		byRank[i] = i
	}
	// Few entries: an insertion sort by rank keeps this allocation-light.
	for i := 1; i < len(byRank); i++ {
		for j := i; j > 0 && metrics[byRank[j]].rank < metrics[byRank[j-1]].rank; j-- {
			byRank[j], byRank[j-1] = byRank[j-1], byRank[j]
		}
	}
	keep := make([]bool, len(metrics))
	weight := 0
	for _, i := range byRank[:n] {
		keep[i] = true
		weight += metrics[i].weight
	}
	// One row each, the rest by weight, what is left over by rank.
	rows := make([]int, len(metrics))
	left := avail - n
	for _, i := range byRank[:n] {
		rows[i] = 1 + (avail-n)*metrics[i].weight/weight
		left -= rows[i] - 1
	}
	for k := 0; left > 0; k = (k + 1) % n {
		rows[byRank[k]]++
		left--
	}
	for i := range metrics {
		if keep[i] {
			f.charts, f.rows = append(f.charts, i), append(f.rows, rows[i])
		}
	}
	return f
}

// pane is one server's state on screen and its cached drawing.
type pane struct {
	index int // position on screen
	id    source.NodeID
	addr  string

	width, height int
	form          paneForm

	columns

	plotSet
	plots  [][]string // per metric: styled plot and scale, one per row
	marks  string     // styled marker row
	marksM bool       // a slot migration's fork is in the marker row
	drawn  chartKey
	drawOK bool
	gen    uint64 // counts chart redraws, for the box cache

	boxLines []string
	boxFor   boxKey
	boxOK    bool
}

// colsKey is what the columns were computed from.
type colsKey struct {
	version uint64
	right   int64 // the right edge, in sub-columns
	plotW   int
	sub     time.Duration
}

// chartKey is what the charts were drawn for.
type chartKey struct {
	cols colsKey
	tops string // the scale tops, joined
}

// boxKey is what a cached box was drawn for.
type boxKey struct {
	version uint64
	gen     uint64
	width   int
	height  int
	focused bool
}

func newPane(index int, id source.NodeID, addr string) *pane {
	n := len(metrics)
	return &pane{index: index, id: id, addr: addr, columns: newColumns(), plots: make([][]string, n)}
}

// columns are a node's chart columns, per metric, from the store's
// points: two per cell for braille lines, and one per cell for bars,
// with the largest value in the window. A pane keeps one set, a fleet
// row another (narrower): both from the same store.
type columns struct {
	sub, cells []chart.Series
	peak       []float64 // the largest value in the window, per metric
	peakOK     []bool
	colsFor    colsKey
	colsOK     bool
	buckets    buckets
	// dirty says a metric's columns changed since its chart was drawn.
	dirty []bool
}

func newColumns() columns {
	n := len(metrics)
	return columns{sub: make([]chart.Series, n), cells: make([]chart.Series, n),
		peak: make([]float64, n), peakOK: make([]bool, n), dirty: make([]bool, n)}
}

// SetSize gives the pane its box size and lays it out.
func (p *pane) SetSize(w, h int) {
	if p.width == w && p.height == h && p.form.plotW != 0 {
		return
	}
	p.width, p.height = w, h
	p.form = formFor(w-paneChrome, h-2)
	p.colsOK, p.drawOK, p.boxOK = false, false, false
}

// bucketOf is the time one cell covers for a window drawn plotW cells
// wide: never shorter than the sampling interval, or cells between
// samples would stay empty.
func bucketOf(window, interval time.Duration, plotW int) time.Duration {
	dt := window / time.Duration(max(plotW, 1))
	return max(dt, interval, 2*time.Millisecond)
}

// sync brings the chart columns up to date with the view, and the
// largest value in the window of each metric. When only new samples came
// (the right edge is in the same column), only they are added; otherwise
// every column is computed again.
func (p *pane) sync(v store.View, now, window time.Duration, c cadence) {
	if !p.form.ok {
		return
	}
	p.fill(v, now, window, c, p.form.plotW)
}

// cadence is how often samples come: every interval at most (the finest
// column), every rest at least while the server answers (a longer hole
// breaks the line).
type cadence struct{ interval, rest time.Duration }

func (m *Model) cadence() cadence { return cadence{m.cfg.Interval, m.cfg.IdleInterval} }

// fill brings the columns up to date with the view for charts w cells
// wide (see pane.sync).
func (p *columns) fill(v store.View, now, window time.Duration, c cadence, w int) {
	sub := bucketOf(window, c.interval, w) / 2
	k := colsKey{version: v.Version, right: int64(now / sub), plotW: w, sub: sub}
	if p.colsOK && k == p.colsFor {
		return
	}
	b := &p.buckets
	pts := v.Points
	same := p.colsOK && k.plotW == p.colsFor.plotW && k.sub == p.colsFor.sub
	if d := k.right - p.colsFor.right; same && d > 0 && d < int64(b.n) && b.holds(pts) {
		// The right edge moved on by d columns: the columns keep what
		// fell in them, so they move left rather than being computed
		// again from every sample (a hundred rows do this every few
		// seconds), and the samples after the last one added follow.
		for i := range p.sub {
			p.sub[i].Shift(int(d))
			p.dirty[i] = true
		}
		b.prevCol -= int(d)
		same = true
	} else {
		same = same && k.right == p.colsFor.right
	}
	if same {
		// The same columns: add the samples after the last one added.
		i := pts.Len()
		for i > 0 && (!b.hasPrev || pts.Offsets[i-1] > b.prevOff) {
			i--
		}
		for ; i < pts.Len(); i++ {
			b.add(p.sub, p.dirty, pts, i, now)
		}
	} else {
		b.reset(2*w, sub, c.rest)
		for i := range p.sub {
			p.sub[i].Reset(b.n)
		}
		for i := range pts.Len() {
			b.add(p.sub, p.dirty, pts, i, now)
		}
		for i := range p.dirty {
			p.dirty[i] = true
		}
	}
	p.colsFor, p.colsOK = k, true
	for i, mt := range metrics {
		if mt.draw == drawBars {
			pairs(&p.cells[i], &p.sub[i], w)
		}
		p.peak[i], p.peakOK[i] = p.sub[i].Max()
	}
}

// buckets puts samples into n columns of dt each, the last one ending at
// now: each column holds the largest value that fell in it, so a short
// spike is never averaged away, and the columns of two panes line up. A
// column a late sample left empty takes the value before it; a hole of
// more than three intervals at rest (a disconnection) stays blank and
// breaks the line.
type buckets struct {
	n            int
	dt, interval time.Duration
	// The last sample added: its offset, column and values (the series
	// it came from may have dropped it since).
	hasPrev bool
	prevOff time.Duration
	prevCol int
	prevV   []float64 // per metric
	prevOK  []bool
}

// reset empties the buckets for n columns of dt, keeping their arrays.
func (b *buckets) reset(n int, dt, interval time.Duration) {
	v, ok := b.prevV, b.prevOK
	if v == nil {
		v, ok = make([]float64, len(metrics)), make([]bool, len(metrics))
	}
	*b = buckets{n: n, dt: dt, interval: interval, prevV: v, prevOK: ok}
}

// add puts sample i of pts, newer than the last one added, into out, and
// marks the metrics whose columns it changed.
func (b *buckets) add(out []chart.Series, dirty []bool, pts store.Series, i int, now time.Duration) {
	off := pts.Offsets[i]
	col := column(off, now, b.dt, b.n)
	if col >= b.n || off > now {
		// Newer than a frozen (paused) right edge: the edge's column
		// spans past now, and samples after the pause stay out.
		return
	}
	hole := b.hasPrev && off-b.prevOff > 3*b.interval
	for m := range metrics {
		o := &out[m]
		v, ok := pts.Value(m, i)
		if col >= 0 {
			if ok && (!o.OK[col] || v > o.V[col]) {
				o.V[col], o.OK[col], dirty[m] = v, true, true
			}
			if hole && !o.Brk[col] {
				o.Brk[col], dirty[m] = true, true
			}
		}
		if b.hasPrev && !hole && col > b.prevCol+1 && b.prevOK[m] {
			for k := max(b.prevCol+1, 0); k < col && k < b.n; k++ {
				if !o.OK[k] {
					o.V[k], o.OK[k], dirty[m] = b.prevV[m], true, true
				}
			}
		}
		b.prevV[m], b.prevOK[m] = v, ok
	}
	b.hasPrev, b.prevOff, b.prevCol = true, off, col
}

// holds reports whether pts still holds the last sample added, with the
// same values (or none was added): the points only grew since, so the
// columns can be carried over. After the store's Reset (a replay seeking)
// they are computed again.
func (b *buckets) holds(pts store.Series) bool {
	if !b.hasPrev {
		return true
	}
	for i := pts.Len() - 1; i >= 0 && pts.Offsets[i] >= b.prevOff; i-- {
		if pts.Offsets[i] != b.prevOff {
			continue
		}
		for m := range metrics {
			if v, ok := pts.Value(m, i); ok != b.prevOK[m] || (ok && v != b.prevV[m]) {
				return false
			}
		}
		return true
	}
	return false
}

// column is the column time t falls in, of n columns of dt each, the last
// one ending at now: n-1 at now, negative before the first, n or more
// after now.
func column(t, now, dt time.Duration, n int) int {
	return n - 1 - int(int64(now/dt)-int64(t/dt))
}

// pairs folds two braille columns per cell into one column per cell for
// bars: the larger of the two.
func pairs(dst, src *chart.Series, w int) {
	dst.Reset(w)
	for k := range w {
		for _, j := range []int{2 * k, 2*k + 1} {
			if j < len(src.V) && src.OK[j] && (!dst.OK[k] || src.V[j] > dst.V[k]) {
				dst.V[k], dst.OK[k] = src.V[j], true
			}
		}
	}
}

// drawCharts draws the shown charts with their scales (tops per metric)
// and the marker row, when anything they show changed.
func (p *pane) drawCharts(st *styles, v store.View, now time.Duration, tops []float64) {
	if !p.form.ok {
		return
	}
	k := chartKey{cols: p.colsFor, tops: topsKey(tops)}
	if p.drawOK && k == p.drawn {
		return
	}
	// SetSize, the only place the form changes, clears drawOK.
	redrawAll := !p.drawOK
	p.drawn, p.drawOK = k, true
	p.gen++
	w := p.form.plotW
	for j, i := range p.form.charts {
		if plot, ok := p.plotSet.draw(&p.columns, i, w, p.form.rows[j], tops[i], redrawAll, st.ascii); ok {
			p.plots[i] = scaled(st, i, plot, tops[i], p.plots[i])
		}
	}
	p.marks = drawMarks(st, now, 2*p.colsFor.sub, w, v.Spans, v.Gaps)
	p.marksM = strings.ContainsRune(ansi.Strip(p.marks), markMigration)
}

// scaled paints a chart's rows and puts its scale at their right: the
// top on the first row, 0 on the last, and on a tall chart its half on
// the row that draws it, all in the top's unit.
func scaled(st *styles, i int, plot []string, top float64, out []string) []string {
	rows := len(plot)
	out = out[:0]
	mid := -1
	if rows >= 5 {
		mid = chart.RowOf(0.5, rows)
	}
	for y, row := range plot {
		tick, label := "│", ""
		switch {
		case math.IsNaN(top):
			if y == 0 {
				tick, label = "┤", na
			}
		case y == 0:
			tick, label = "┤", metrics[i].unit.scaleText(top, top)
		case y == rows-1:
			tick, label = "┤", "0"
		case y == mid:
			tick, label = "┤", metrics[i].unit.scaleText(top/2, top)
		}
		out = append(out, st.series[i].r(row)+st.dim.r(tick)+st.label.r(fitRight(label, scaleW-1)))
	}
	return out
}

// topsKey makes a cache key of the scale tops.
func topsKey(tops []float64) string {
	var b strings.Builder
	for _, t := range tops {
		b.WriteString(sig3(t))
		b.WriteByte(' ')
	}
	return b.String()
}

// box returns the pane's bordered box as lines, drawing it only when the
// view, the charts or the geometry changed since the last time.
func (p *pane) box(st *styles, prog progress.Model, v store.View, k boxKey) []string {
	k.version, k.gen, k.width, k.height = v.Version, p.gen, p.width, p.height
	if p.boxOK && p.boxFor == k {
		return p.boxLines
	}
	p.boxLines = p.render(st, prog, v, k.focused)
	p.boxFor, p.boxOK = k, true
	return p.boxLines
}

// render draws the whole pane box from the cached charts.
func (p *pane) render(st *styles, prog progress.Model, v store.View, focused bool) []string {
	f := &p.form
	iw := p.width - paneChrome
	s := v.Latest
	lines := make([]string, 0, p.height)
	lines = append(lines, stateLine(st, v, iw))
	now := nextBlock(st, v)
	if s != nil && s.Save != nil {
		now = saveBlock(st, prog, v)
	}
	last := reportBlock(st, v.Report)
	for _, b := range []struct {
		b    *block
		rows int
	}{{&now, f.now}, {&last, f.last}} {
		bl, _ := b.b.lines(st, iw, b.rows)
		lines = append(lines, bl...)
		// Blank rows to the block's own: the charts below stay where
		// they are whatever the block shows.
		for range b.rows - len(bl) {
			lines = append(lines, "")
		}
	}
	fixed := make([]string, 0, p.height)
	for j, i := range f.charts {
		labels := chartLabels(st, i, s, f.rows[j], f.labelW, p.peak[i], p.peakOK[i])
		for y, row := range p.plots[i] {
			fixed = append(fixed, labels[y]+row)
		}
	}
	legend := markLegendFor(f.labelW, p.marksM)
	fixed = append(fixed, padRight(st.dim.r(legend), f.labelW)+p.marks+strings.Repeat(" ", scaleW))
	top := title(st, p.addr, v)
	axis := chart.AxisLine(f.plotW, chart.TimeTicks(f.plotW, 2*p.colsFor.sub), '─')
	return frame(st, lines, fixed, p.width, p.height, focused, top, f.labelW, axis)
}

// title is the top border's text: the server and what it runs.
func title(st *styles, addr string, v store.View) string {
	name, version, role := "", "", ""
	if v.Identity != nil {
		name, version, role = v.Identity.ServerName, v.Identity.Version, v.Identity.Role
	}
	if s := v.Latest; s != nil {
		if s.Info.Version != "" {
			name, version = s.Info.ServerName, s.Info.Version
		}
		if s.Info.Role != "" {
			role = s.Info.Role
		}
	}
	if name == "" {
		name = "redis" // Redis has no server_name field
	}
	return st.addr.r(addr) + st.dim.r(" · ") + st.value.r(name+" "+fmtOrNA(version)) +
		st.dim.r(" · ") + st.value.r(fmtOrNA(role))
}

// chartLabels are the text left of a chart, one per row: its name and
// value now (and its instrument's tag on a one-row chart), then the
// instrument, the notes of the metric, and the largest value in the
// window.
func chartLabels(st *styles, i int, s *source.Sample, rows, width int, peak float64, peakOK bool) []string {
	mt := &metrics[i]
	tag, long := "", ""
	if s != nil {
		tag, long = mt.from(s)
	}
	valW := width - 11
	if rows == 1 && tag != "" {
		valW -= 5
	}
	main := st.series[i].r(padRight(mt.label, 9)) + " " + st.value.r(fitRight(mt.currentText(s), valW))
	if rows == 1 && tag != "" {
		main += st.dim.r(" " + padRight(tag, 4))
	}
	out := []string{main}
	if long != "" {
		out = append(out, st.dim.r(long))
	}
	if s != nil && mt.notes != nil {
		out = append(out, mt.notes(st, s)...)
	}
	peakText := na
	if peakOK {
		peakText = mt.unit.format(peak)
	}
	out = append(out, st.label.r("window max ")+st.value.r(peakText))
	for len(out) < rows {
		out = append(out, "")
	}
	out = out[:rows]
	// Every label is cut to its column, one cell short of the plot, and
	// measured once (again only when cut): this runs for every row of
	// every chart per frame.
	for y, l := range out {
		out[y] = fitCells(l, width-1) + " "
	}
	return out
}

// Marker row glyphs. Letters rather than colours tell the kinds apart, so
// the row reads the same under NO_COLOR.
const (
	markRun  = '─' // a save running in this column
	markEnd  = '┤' // the save ended in this column
	markGap  = '×' // disconnected: no samples
	markNone = ' '
)

// markLegend is the marker row's label; markLegendShort where it does not fit.
// A slot migration's fork (Valkey 9.0's atomic slot migration) is rare, so
// its letter joins the legend only while one is in the row.
const (
	markLegend       = "F fork L forkless A aof ×gap"
	markLegendShort  = "saves F/L/A ×gap"
	markLegendM      = "F fork L forkless A aof M slot migration ×gap"
	markLegendMMid   = "F fork L forkless A aof M migr. ×gap"
	markLegendMShort = "saves F/L/A/M ×gap"
	markMigration    = 'M'
)

// markLegendFor is the widest legend that fits labelW cells.
func markLegendFor(labelW int, migration bool) string {
	all := []string{markLegend, markLegendShort}
	if migration {
		all = []string{markLegendM, markLegendMShort}
	}
	for _, l := range all[:len(all)-1] {
		if labelW >= len(l)+1 { // bytes, as the legend was always measured
			return l
		}
	}
	return all[len(all)-1]
}

// kindNames are a save kind's mark on the marker row and its name in a
// fleet row's few cells (shortKind; none for a slot migration's fork).
var kindNames = map[source.SaveKind]struct {
	mark  rune
	short string
}{
	source.SaveFork:          {'F', "fork"},
	source.SaveForkless:      {'L', "forkless"},
	source.SaveAOF:           {'A', "aof"},
	source.SaveSlotMigration: {markMigration, ""},
}

func kindMark(k source.SaveKind) rune {
	if n, ok := kindNames[k]; ok {
		return n.mark
	}
	return '?'
}

// drawMarks renders the marker row, w cells of dt each ending at now:
// where saves ran and where the server was unreachable.
func drawMarks(st *styles, now, dt time.Duration, w int, spans []store.Span, gaps []store.Gap) string {
	if dt <= 0 || w <= 0 {
		return ""
	}
	col := func(t time.Duration) int { return column(t, now, dt, w) }
	row := make([]rune, w)
	for i := range row {
		row[i] = markNone
	}
	fill := func(from, to int, r rune) {
		for k := max(from, 0); k <= to && k < w; k++ {
			row[k] = r
		}
	}
	for _, g := range gaps {
		to := g.To
		if g.Open {
			to = now
		}
		fill(col(g.From), col(to), markGap)
	}
	for _, s := range spans {
		a, b := col(s.Start), col(s.End)
		fill(a, b, markRun)
		if s.Ended && b >= 0 && b < w && b != a {
			row[b] = markEnd
		}
		if a >= 0 && a < w {
			row[a] = kindMark(s.Kind)
		}
	}
	// Style runs of the same class together: one paint per run.
	class := func(r rune) int {
		switch r {
		case markNone:
			return 0
		case markGap:
			return 1
		}
		return 2
	}
	var out strings.Builder
	start := 0
	for k := 1; k <= w; k++ {
		if k < w && class(row[k]) == class(row[start]) {
			continue
		}
		seg := string(row[start:k])
		switch class(row[start]) {
		case 1:
			seg = st.gap.r(seg)
		case 2:
			seg = st.markers.r(seg)
		}
		out.WriteString(seg)
		start = k
	}
	return out.String()
}
