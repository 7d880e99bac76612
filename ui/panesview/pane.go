package panesview

import (
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/chart"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/status"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

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
	keep := 2*len(plot.Charts) - 1
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
	n := min(len(plot.Charts), avail)
	byRank := make([]int, len(plot.Charts))
	for i := range byRank {
		byRank[i] = i
	}
	// Few entries: an insertion sort by rank keeps this allocation-light.
	for i := 1; i < len(byRank); i++ {
		for j := i; j > 0 && plot.Charts[byRank[j]].Rank < plot.Charts[byRank[j-1]].Rank; j-- {
			byRank[j], byRank[j-1] = byRank[j-1], byRank[j]
		}
	}
	keep := make([]bool, len(plot.Charts))
	weight := 0
	for _, i := range byRank[:n] {
		keep[i] = true
		weight += plot.Charts[i].Weight
	}
	// One row each, the rest by weight, what is left over by rank.
	rows := make([]int, len(plot.Charts))
	left := avail - n
	for _, i := range byRank[:n] {
		rows[i] = 1 + (avail-n)*plot.Charts[i].Weight/weight
		left -= rows[i] - 1
	}
	for k := 0; left > 0; k = (k + 1) % n {
		rows[byRank[k]]++
		left--
	}
	for i := range plot.Charts {
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

	plot.Columns

	plot.PlotSet
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

// chartKey is what the charts were drawn for.
type chartKey struct {
	cols plot.ColsKey
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
	n := len(plot.Charts)
	return &pane{index: index, id: id, addr: addr, Columns: plot.NewColumns(), plots: make([][]string, n)}
}

// SetSize gives the pane its box size and lays it out.
func (p *pane) SetSize(w, h int) {
	if p.width == w && p.height == h && p.form.plotW != 0 {
		return
	}
	p.width, p.height = w, h
	p.form = formFor(w-paneChrome, h-2)
	p.Invalidate()
	p.drawOK, p.boxOK = false, false
}

// sync brings the chart columns up to date with the view, and the
// largest value in the window of each metric. When only new samples came
// (the right edge is in the same column), only they are added; otherwise
// every column is computed again.
func (p *pane) sync(v store.View, now, window time.Duration, c plot.Cadence) {
	if !p.form.ok {
		return
	}
	p.Fill(v, now, window, c, p.form.plotW)
}

// drawCharts draws the shown charts with their scales (tops per metric)
// and the marker row, when anything they show changed.
func (p *pane) drawCharts(st *style.Styles, v store.View, now time.Duration, tops []float64) {
	if !p.form.ok {
		return
	}
	k := chartKey{cols: p.For(), tops: topsKey(tops)}
	if p.drawOK && k == p.drawn {
		return
	}
	// SetSize, the only place the form changes, clears drawOK.
	redrawAll := !p.drawOK
	p.drawn, p.drawOK = k, true
	p.gen++
	w := p.form.plotW
	for j, i := range p.form.charts {
		if drawn, ok := p.PlotSet.Draw(&p.Columns, i, w, p.form.rows[j], tops[i], redrawAll, st.ASCII); ok {
			p.plots[i] = scaled(st, i, drawn, tops[i], p.plots[i])
		}
	}
	p.marks = drawMarks(st, now, 2*p.For().Sub, w, v.Spans, v.Gaps)
	p.marksM = strings.ContainsRune(ansi.Strip(p.marks), words.MarkMigration)
}

// scaled paints a chart's rows and puts its scale at their right: the
// top on the first row, 0 on the last, and on a tall chart its half on
// the row that draws it, all in the top's unit.
func scaled(st *style.Styles, i int, drawn []string, top float64, out []string) []string {
	rows := len(drawn)
	out = out[:0]
	mid := -1
	if rows >= 5 {
		mid = chart.RowOf(0.5, rows)
	}
	for y, row := range drawn {
		tick, label := "│", ""
		switch {
		case math.IsNaN(top):
			if y == 0 {
				tick, label = "┤", text.NA
			}
		case y == 0:
			tick, label = "┤", plot.Charts[i].Unit.ScaleText(top, top)
		case y == rows-1:
			tick, label = "┤", "0"
		case y == mid:
			tick, label = "┤", plot.Charts[i].Unit.ScaleText(top/2, top)
		}
		out = append(out, st.Series[i].R(row)+st.Dim.R(tick)+st.Label.R(text.FitRight(label, scaleW-1)))
	}
	return out
}

// topsKey makes a cache key of the scale tops.
func topsKey(tops []float64) string {
	var b strings.Builder
	for _, t := range tops {
		b.WriteString(text.Sig3(t))
		b.WriteByte(' ')
	}
	return b.String()
}

// box returns the pane's bordered box as lines, drawing it only when the
// view, the charts or the geometry changed since the last time.
func (p *pane) box(st *style.Styles, prog progress.Model, v store.View, k boxKey) []string {
	k.version, k.gen, k.width, k.height = v.Version, p.gen, p.width, p.height
	if p.boxOK && p.boxFor == k {
		return p.boxLines
	}
	p.boxLines = p.render(st, prog, v, k.focused)
	p.boxFor, p.boxOK = k, true
	return p.boxLines
}

// render draws the whole pane box from the cached charts.
func (p *pane) render(st *style.Styles, prog progress.Model, v store.View, focused bool) []string {
	f := &p.form
	iw := p.width - paneChrome
	s := v.Latest
	lines := make([]string, 0, p.height)
	lines = append(lines, status.StateLine(st, v, iw))
	now := status.Next(st, v)
	if s != nil && s.Save != nil {
		now = status.Save(st, prog, v)
	}
	last := status.Report(st, v.Report)
	for _, b := range []struct {
		b    *status.Block
		rows int
	}{{&now, f.now}, {&last, f.last}} {
		bl, _ := b.b.Lines(st, iw, b.rows)
		lines = append(lines, bl...)
		// Blank rows to the block's own: the charts below stay where
		// they are whatever the block shows.
		for range b.rows - len(bl) {
			lines = append(lines, "")
		}
	}
	fixed := make([]string, 0, p.height)
	for j, i := range f.charts {
		labels := chartLabels(st, i, s, f.rows[j], f.labelW, p.Peak[i], p.PeakOK[i])
		for y, row := range p.plots[i] {
			fixed = append(fixed, labels[y]+row)
		}
	}
	legend := MarkLegendFor(f.labelW, p.marksM)
	fixed = append(fixed, text.PadRight(st.Dim.R(legend), f.labelW)+p.marks+strings.Repeat(" ", scaleW))
	top := title(st, p.addr, v)
	axis := chart.AxisLine(f.plotW, chart.TimeTicks(f.plotW, 2*p.For().Sub), '─')
	return frame(st, lines, fixed, p.width, p.height, focused, top, f.labelW, axis)
}

// title is the top border's text: the server and what it runs.
func title(st *style.Styles, addr string, v store.View) string {
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
	return st.Addr.R(addr) + st.Dim.R(" · ") + st.Value.R(name+" "+text.OrNA(version)) +
		st.Dim.R(" · ") + st.Value.R(text.OrNA(role))
}

// chartLabels are the text left of a chart, one per row: its name and
// value now (and its instrument's tag on a one-row chart), then the
// instrument, the notes of the metric, and the largest value in the
// window.
func chartLabels(st *style.Styles, i int, s *source.Sample, rows, width int, peak float64, peakOK bool) []string {
	mt := &plot.Charts[i]
	tag, long := "", ""
	if s != nil {
		tag, long = mt.From(s)
	}
	valW := width - 11
	if rows == 1 && tag != "" {
		valW -= 5
	}
	main := st.Series[i].R(text.PadRight(mt.Label, 9)) + " " + st.Value.R(text.FitRight(mt.CurrentText(s), valW))
	if rows == 1 && tag != "" {
		main += st.Dim.R(" " + text.PadRight(tag, 4))
	}
	out := []string{main}
	if long != "" {
		out = append(out, st.Dim.R(long))
	}
	if s != nil && mt.Notes != nil {
		out = append(out, mt.Notes(st, s)...)
	}
	peakText := text.NA
	if peakOK {
		peakText = mt.Unit.Format(peak)
	}
	out = append(out, st.Label.R("window max ")+st.Value.R(peakText))
	for len(out) < rows {
		out = append(out, "")
	}
	out = out[:rows]
	// Every label is cut to its column, one cell short of the plot, and
	// measured once (again only when cut): this runs for every row of
	// every chart per frame.
	for y, l := range out {
		out[y] = text.FitCells(l, width-1) + " "
	}
	return out
}
