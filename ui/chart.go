package ui

import (
	"strings"
	"time"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/sparkline"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
)

// metric names one chart of a pane.
type metric int

const (
	mUsed metric = iota // used_memory, bytes
	mRSS                // used_memory_rss, bytes
	mCOW                // live copy-on-write of the save child, bytes
	mOps                // ops/s
	mPing               // worst PING of the interval, nanoseconds
	numMetrics
)

// point is one sample reduced to what the charts draw. ok is false where the
// sample lacked the value: such a point draws nothing rather than a 0.
type point struct {
	off time.Duration
	v   [numMetrics]float64
	ok  [numMetrics]bool
}

// pointOf extracts the charted values of a sample.
func pointOf(s *source.Sample) point {
	p := point{off: s.Offset}
	set := func(m metric, v float64, ok bool) { p.v[m], p.ok[m] = v, ok }
	set(mUsed, float64(s.Info.UsedMemory.V), s.Info.UsedMemory.OK)
	set(mRSS, float64(s.Info.RSS.V), s.Info.RSS.OK)
	cow, ok := liveCOW(s)
	set(mCOW, float64(cow), ok)
	set(mOps, s.OpsPerSec.V, s.OpsPerSec.OK)
	w, ok := worstPing(s)
	set(mPing, float64(w), ok)
	return p
}

// liveCOW is the copy-on-write to chart: current_cow_size while a save runs,
// 0 when none runs (the field is present, so idle is a real 0), absent when
// the server does not report the field at all.
func liveCOW(s *source.Sample) (int64, bool) {
	if s.Save != nil {
		if s.Save.LiveCOW.OK {
			return s.Save.LiveCOW.V, true
		}
		return s.Info.CurrentCOW.Get()
	}
	if s.Info.CurrentCOW.OK {
		return 0, true
	}
	return 0, false
}

// worstPing is the worst PING of the sample's interval, counting one still in
// flight so a stall shows while it lasts. Absent when no PING completed or
// waited during the interval.
func worstPing(s *source.Sample) (time.Duration, bool) {
	if s.Ping.Count == 0 && s.Ping.InFlight == 0 {
		return 0, false
	}
	return s.Ping.Worst(), true
}

// series keeps one pane's points in time order. Old points are dropped from
// the front and the slice is compacted now and then, so memory stays bounded
// by the window while a push stays O(1).
type series struct {
	pts  []point
	head int
}

func (s *series) push(p point) { s.pts = append(s.pts, p) }

func (s *series) points() []point { return s.pts[s.head:] }

// dropBefore forgets the points older than off.
func (s *series) dropBefore(off time.Duration) {
	for s.head < len(s.pts) && s.pts[s.head].off < off {
		s.head++
	}
	if s.head > 64 && s.head*2 > len(s.pts) {
		n := copy(s.pts, s.pts[s.head:])
		s.pts = s.pts[:n]
		s.head = 0
	}
}

// span is a save as the marker row shows it: from start to end, or to the
// last sample that saw it running while it has not ended.
type span struct {
	kind  source.SaveKind
	start time.Duration
	end   time.Duration
	ended bool
}

// gap is a disconnection: no samples from..to (to is the chart's right edge
// while it lasts).
type gap struct {
	from, to time.Duration
	open     bool
}

// Marker row glyphs. Letters rather than colours tell the kinds apart, so
// the row reads the same under NO_COLOR.
const (
	markRun  = '─' // a save running in this column
	markEnd  = '┤' // the save ended in this column
	markGap  = '×' // disconnected: no samples
	markNone = ' '
)

// markLegend is the marker row's label.
const markLegend = "F fork L forkless A aof ×gap"

func kindMark(k source.SaveKind) rune {
	switch k {
	case source.SaveFork:
		return 'F'
	case source.SaveForkless:
		return 'L'
	case source.SaveAOF:
		return 'A'
	}
	return '?'
}

// chartSet draws the five sparklines of one pane and the marker row under
// them. It runs when samples arrive (from Update), never from View: View only
// joins the strings cached here.
//
// The x axis is time, not sample count: each column covers window/width of
// time and shows the largest value that fell in it, so a short spike is never
// averaged away, the charts of two panes line up, and a disconnection leaves
// a visible blank instead of closing up.
type chartSet struct {
	width, rows int
	window      time.Duration
	interval    time.Duration

	sparks [numMetrics]sparkline.Model
	vals   [numMetrics][]float64
	has    [numMetrics][]bool

	// winMax is the largest value in the window per metric (present when
	// winOK): sparkline's own max only ever grows, so one old spike would
	// flatten every later column.
	winMax [numMetrics]float64
	winOK  [numMetrics]bool

	lines [numMetrics][]string // styled chart rows, cached
	marks string               // styled marker row, cached
	drawn bool
}

func newChartSet(window, interval time.Duration) chartSet {
	return chartSet{window: window, interval: interval}
}

// resize prepares the sparklines for width columns of rows rows each.
func (c *chartSet) resize(width, rows int) {
	if width < 1 {
		width = 1
	}
	if rows < 1 {
		rows = 1
	}
	if c.width == width && c.rows == rows && c.sparks[0].Width() == width {
		return
	}
	c.width, c.rows = width, rows
	for m := range numMetrics {
		sp := sparkline.New(width, rows)
		sp.AutoMaxValue = false
		c.sparks[m] = sp
		c.vals[m] = make([]float64, width)
		c.has[m] = make([]bool, width)
		c.lines[m] = make([]string, rows)
	}
	c.drawn = false
}

// bucket is the time one column covers. It is never shorter than the
// sampling interval, or columns between samples would stay empty.
func (c *chartSet) bucket() time.Duration {
	dt := c.window / time.Duration(c.width)
	if dt < c.interval {
		dt = c.interval
	}
	if dt <= 0 {
		dt = time.Millisecond
	}
	return dt
}

// column maps an offset to a column for a chart whose right edge is now;
// it is negative for offsets left of the window.
func (c *chartSet) column(off, now time.Duration) int {
	dt := c.bucket()
	return c.width - 1 - int(int64(now/dt)-int64(off/dt))
}

// draw recomputes the charts and the marker row for the window ending at now.
func (c *chartSet) draw(st *styles, now time.Duration, pts []point, spans []span, gaps []gap) {
	w := c.width
	for m := range numMetrics {
		clear(c.vals[m])
		clear(c.has[m])
		c.winMax[m], c.winOK[m] = 0, false
	}
	var prev *point
	prevCol := 0
	for i := range pts {
		p := &pts[i]
		col := c.column(p.off, now)
		if col >= w || p.off > now {
			// Newer than a frozen (paused) right edge. The offset test
			// matters too: the right edge's column spans past now, and a
			// redraw while paused (a resize) must not pull in samples that
			// arrived after the pause.
			break
		}
		if col >= 0 {
			for m := range numMetrics {
				if p.ok[m] && (!c.has[m][col] || p.v[m] > c.vals[m][col]) {
					c.vals[m][col], c.has[m][col] = p.v[m], true
				}
			}
		}
		// A late sample can leave a column with nothing in it although the
		// stream never stopped; carry the previous value across so only a
		// real gap (a disconnection, several intervals long) shows blank.
		if prev != nil && col > prevCol+1 && p.off-prev.off <= 3*c.interval {
			for k := max(prevCol+1, 0); k < col && k < w; k++ {
				for m := range numMetrics {
					if prev.ok[m] && !c.has[m][k] {
						c.vals[m][k], c.has[m][k] = prev.v[m], true
					}
				}
			}
		}
		prev, prevCol = p, col
	}
	for m := range numMetrics {
		for k := range w {
			if c.has[m][k] && (!c.winOK[m] || c.vals[m][k] > c.winMax[m]) {
				c.winMax[m], c.winOK[m] = c.vals[m][k], true
			}
		}
		c.drawSpark(st, m)
	}
	c.marks = c.drawMarks(st, now, spans, gaps)
	c.drawn = true
}

// drawSpark feeds one metric's columns to its sparkline and caches its rows.
func (c *chartSet) drawSpark(st *styles, m metric) {
	sp := &c.sparks[m]
	top := c.winMax[m]
	if top <= 0 {
		top = 1
	}
	// No sp.Clear: width pushes overwrite the whole ring buffer anyway.
	sp.SetMax(top)
	// The smallest value that still draws a glyph (1/8 of a row): a present
	// but tiny value should not look like a missing one.
	floor := top / float64(8*c.rows)
	for k := range c.width {
		v := c.vals[m][k]
		if c.has[m][k] && v > 0 && v < floor {
			v = floor
		}
		sp.Push(v)
	}
	sp.DrawColumnsOnly() // Draw would also restyle every cell; rows are styled below
	// Read the drawn runes back and style each row once: the canvas's own
	// View renders every cell through lipgloss, which costs far more and
	// repeats the same colour escape for each cell.
	var b strings.Builder
	for y := range c.rows {
		b.Reset()
		for x := range c.width {
			r := sp.Canvas.Cell(canvas.Point{X: x, Y: y}).Rune
			if r == 0 {
				r = ' '
			}
			b.WriteRune(r)
		}
		c.lines[m][y] = st.series[m].r(b.String())
	}
}

// drawMarks renders the marker row: where saves ran and where the server
// was unreachable.
func (c *chartSet) drawMarks(st *styles, now time.Duration, spans []span, gaps []gap) string {
	w := c.width
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
		to := g.to
		if g.open {
			to = now
		}
		fill(c.column(g.from, now), c.column(to, now), markGap)
	}
	for _, s := range spans {
		a, b := c.column(s.start, now), c.column(s.end, now)
		fill(a, b, markRun)
		if s.ended && b >= 0 && b < w && b != a {
			row[b] = markEnd
		}
		if a >= 0 && a < w {
			row[a] = kindMark(s.kind)
		}
	}
	// Style runs of the same class together: one Render per run.
	var out strings.Builder
	start := 0
	class := func(r rune) int {
		switch r {
		case markNone:
			return 0
		case markGap:
			return 1
		}
		return 2
	}
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

// padRight pads s (which may hold escapes) with spaces to width cells.
func padRight(s string, width int) string {
	if n := lipgloss.Width(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// fitLeft right-aligns s in width cells, cutting it when longer.
func fitLeft(s string, width int) string {
	n := lipgloss.Width(s)
	if n > width {
		return ansi.Truncate(s, width, "…")
	}
	return strings.Repeat(" ", width-n) + s
}
