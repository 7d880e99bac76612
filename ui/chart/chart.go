// Package chart draws vkwatch's charts as rows of runes: a braille line or
// block bars of one series against time columns, and braille curves
// against any X (a save's cost against its progress). It does no styling:
// callers paint each row (or each run of cells one curve owns) once, which
// is far cheaper than rendering every cell through lipgloss as ntcharts'
// canvas View does.
//
// The dots and blocks are ntcharts': its braille dot grid and line
// points, and its graph columns for bars.
//
// Absent is not zero: a value whose ok flag is false draws nothing, and no
// line is drawn through it, so a disconnection or a field a server lacks
// leaves a blank.
package chart

import (
	"math"
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
	"github.com/charmbracelet/lipgloss"
)

// Series is one chart's values, one per column (bars) or two per cell
// (braille: each cell holds two dot columns). Brk[i] says a hole in the
// data lies between column i-1 and i (the samples stopped for longer
// than a sampling gap): no line joins them even when both are present.
type Series struct {
	V   []float64
	OK  []bool
	Brk []bool
}

// Reset sizes s for n columns, all absent.
func (s *Series) Reset(n int) {
	if cap(s.V) < n {
		s.V, s.OK, s.Brk = make([]float64, n), make([]bool, n), make([]bool, n)
	}
	s.V, s.OK, s.Brk = s.V[:n], s.OK[:n], s.Brk[:n]
	clear(s.V)
	clear(s.OK)
	clear(s.Brk)
}

// Shift moves the columns d to the left: the first d drop out and d
// absent ones come in on the right.
func (s *Series) Shift(d int) {
	n := len(s.V)
	d = min(max(d, 0), n)
	copy(s.V, s.V[d:])
	copy(s.OK, s.OK[d:])
	copy(s.Brk, s.Brk[d:])
	clear(s.V[n-d:])
	clear(s.OK[n-d:])
	clear(s.Brk[n-d:])
}

// Max returns the largest present value, and whether there is one.
func (s *Series) Max() (float64, bool) {
	top, ok := 0.0, false
	for i, v := range s.V {
		if s.OK[i] && (!ok || v > top) {
			top, ok = v, true
		}
	}
	return top, ok
}

// Line draws a series as a braille line, width cells by rows rows: two
// dot columns and four dot rows per cell. Reuse one per chart: its grid
// is kept between draws.
type Line struct {
	size
	grid *runes.PatternDotsGrid
	set  []canvas.Point // the dots set by the last draw, to unset
	out  []string
	b    strings.Builder
}

// size is a chart's size in cells.
type size struct {
	width, rows int
	made        bool // a size was given and the chart's buffers made for it
}

// resize takes width by rows cells, at least 1 by 1, and reports whether
// that differs from the chart's size (or none was given yet): only then
// does the chart make its buffers again.
func (s *size) resize(width, rows int) bool {
	width, rows = max(width, 1), max(rows, 1)
	if s.made && s.width == width && s.rows == rows {
		return false
	}
	s.width, s.rows, s.made = width, rows, true
	return true
}

// NewLine returns a line chart of width cells by rows rows.
func NewLine(width, rows int) *Line {
	l := &Line{}
	l.Resize(width, rows)
	return l
}

// Resize changes the chart's size.
func (l *Line) Resize(width, rows int) {
	if !l.resize(width, rows) {
		return
	}
	l.grid = runes.NewPatternDotsGrid(2*l.width, 4*l.rows)
	l.set = l.set[:0]
	l.out = make([]string, l.rows)
}

// dot sets one dot of the grid, remembering it.
func (l *Line) dot(p canvas.Point) {
	l.grid.Set(p.X, p.Y)
	l.set = append(l.set, p)
}

// Draw plots s (2*width columns, the newest at the right) on a scale
// from 0 to top and returns the rows, top first, as runes with a space
// where nothing is drawn. Each present value is a dot; dots of
// neighbouring present columns are joined unless a hole lies between.
func (l *Line) Draw(s *Series, top float64) []string {
	// Unset the last draw's dots rather than Reset the grid: Reset
	// allocates every row again, and this runs for every chart per frame.
	for _, p := range l.set {
		l.grid.Unset(p.X, p.Y)
	}
	l.set = l.set[:0]
	dotsH := 4 * l.rows
	n := min(len(s.V), 2*l.width)
	off := 2*l.width - n // fewer values than columns: right-align them
	prevY, havePrev := 0, false
	for i := range n {
		if !s.OK[i] {
			havePrev = false
			continue
		}
		y := dotRow(s.V[i], top, dotsH)
		x := off + i
		if havePrev && !s.Brk[i] {
			l.join(x-1, prevY, x, y)
		} else {
			l.dot(canvas.Point{X: x, Y: y})
		}
		prevY, havePrev = y, true
	}
	for y, row := range l.grid.BraillePatterns() {
		l.b.Reset()
		for _, r := range row {
			if r == runes.BrailleBlockOffset {
				r = ' '
			}
			l.b.WriteRune(r)
		}
		l.out[y] = l.b.String()
	}
	return l.out
}

// join sets the dots of a line between two neighbouring dot columns: a
// vertical run, which is what ntcharts' line points are between columns
// one apart, without the slice they allocate.
func (l *Line) join(x0, y0, x1, y1 int) {
	mid := (y0 + y1) / 2
	for y := min(y0, mid); y <= max(y0, mid); y++ {
		l.dot(canvas.Point{X: x0, Y: y})
	}
	for y := min(mid, y1); y <= max(mid, y1); y++ {
		l.dot(canvas.Point{X: x1, Y: y})
	}
}

// RowOf is the row (0 at the top) of a chart rows high in which the
// fraction f of its scale is drawn: where a scale's label for it goes.
func RowOf(f float64, rows int) int { return dotRow(f, 1, 4*max(rows, 1)) / 4 }

// dotRow is the grid row (0 at the top) of value v on a scale of 0..top
// over h dot rows. Values outside the scale are drawn at its edge.
func dotRow(v, top float64, h int) int {
	if top <= 0 || math.IsNaN(v) {
		return h - 1
	}
	k := int(math.Round(v / top * float64(h-1)))
	return h - 1 - min(max(k, 0), h-1)
}

// Bars draws a series as block columns, width cells by rows rows, one
// value per column: ntcharts' graph columns on a canvas of its own (the
// sparkline's Draw would allocate a fresh canvas every time).
type Bars struct {
	size
	c      canvas.Model
	height []float64
	out    []string
	b      strings.Builder
}

// NewBars returns a bar chart of width columns by rows rows.
func NewBars(width, rows int) *Bars {
	b := &Bars{}
	b.Resize(width, rows)
	return b
}

// Resize changes the chart's size.
func (b *Bars) Resize(width, rows int) {
	if !b.resize(width, rows) {
		return
	}
	b.c = canvas.New(b.width, b.rows)
	b.height = make([]float64, b.width)
	b.out = make([]string, b.rows)
}

// Draw plots s (width columns) on a scale from 0 to top and returns the
// rows, top first. A present value too small to fill an eighth of a row
// still draws the lowest block: it must not look like a missing one.
func (b *Bars) Draw(s *Series, top float64) []string {
	if top <= 0 {
		top = 1
	}
	rows := float64(b.rows)
	n := min(len(s.V), b.width)
	clear(b.height)
	for i := range n {
		v := s.V[i]
		switch {
		case !s.OK[i] || v <= 0:
			continue
		case v > top:
			v = top
		}
		b.height[b.width-n+i] = max(v/top*rows, 1.0/8)
	}
	b.c.Fill(canvas.Cell{})
	graph.DrawColumns(&b.c, canvas.Point{X: 0, Y: b.rows - 1}, b.height, plain)
	for y := range b.rows {
		b.b.Reset()
		for x := range b.width {
			r := b.c.Cell(canvas.Point{X: x, Y: y}).Rune
			if r == 0 {
				r = ' '
			}
			b.b.WriteRune(r)
		}
		b.out[y] = b.b.String()
	}
	return b.out
}

// plain is the style cells are drawn with: none, the caller paints rows.
var plain = lipgloss.NewStyle()
