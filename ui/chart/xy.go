package chart

import (
	"math"

	"github.com/NimbleMarkets/ntcharts/canvas"
	"github.com/NimbleMarkets/ntcharts/canvas/graph"
	"github.com/NimbleMarkets/ntcharts/canvas/runes"
)

// Point is one point of an XY curve. A point that is not OK breaks the
// curve: no line is drawn to it or from it.
type Point struct {
	X, Y float64
	OK   bool
}

// XY draws several curves against any X on one plot of braille dots,
// width cells by rows rows, each curve labelled by a rune at its end so
// they tell apart without colour.
type XY struct {
	size
	grid  *graph.BrailleGrid
	cells [][]rune
	owner [][]int
}

// NewXY returns a plot of width cells by rows rows.
func NewXY(width, rows int) *XY {
	c := &XY{}
	c.Resize(width, rows)
	return c
}

// Resize changes the plot's size.
func (c *XY) Resize(width, rows int) {
	if !c.resize(width, rows) {
		return
	}
	c.grid = graph.NewBrailleGrid(c.width, c.rows, 0, 1, 0, 1)
	c.cells, c.owner = make([][]rune, c.rows), make([][]int, c.rows)
	for y := range c.rows {
		c.cells[y], c.owner[y] = make([]rune, c.width), make([]int, c.width)
	}
}

// Draw plots curves on the ranges x0..x1 and y0..y1 and returns the
// plot's cells, top row first (a space where nothing is drawn), and which
// curve owns each cell (-1: none), for the caller to paint. A later curve
// draws over an earlier one: their dots combine in a shared cell and the
// later owns it. labels[i] (when given) is drawn in the cell just right
// of curve i's last point, or the nearest free cell above or below: the
// label is the curve's name on a screen without colour.
func (c *XY) Draw(curves [][]Point, labels []rune, x0, x1, y0, y1 float64) ([][]rune, [][]int) {
	for y := range c.rows {
		for x := range c.width {
			c.cells[y][x], c.owner[y][x] = ' ', -1
		}
	}
	ends := make([]canvas.Point, len(curves))
	drawn := make([]bool, len(curves))
	for i, pts := range curves {
		ends[i], drawn[i] = c.curve(i, pts, x0, x1, y0, y1)
	}
	taken := map[canvas.Point]bool{}
	for i := range curves {
		if i < len(labels) && drawn[i] {
			c.label(ends[i], labels[i], i, taken)
		}
	}
	return c.cells, c.owner
}

// curve draws one curve into the cells and returns the cell of its last
// drawn point, and whether it drew anything.
func (c *XY) curve(i int, pts []Point, x0, x1, y0, y1 float64) (canvas.Point, bool) {
	if c.ASCII {
		return c.curveASCII(i, pts, x0, x1, y0, y1)
	}
	c.grid.Clear()
	last, any := walk(pts, x0, x1, y0, y1, 2*c.width, 4*c.rows, c.grid.Set)
	if !any {
		return canvas.Point{}, false
	}
	for y, row := range c.grid.BraillePatterns() {
		for x, r := range row {
			if r == runes.BrailleBlockOffset {
				continue
			}
			if old := c.cells[y][x]; runes.IsBraillePattern(old) {
				r = runes.CombineBraillePatterns(old, r)
			}
			c.cells[y][x], c.owner[y][x] = r, i
		}
	}
	return canvas.Point{X: last.X / 2, Y: last.Y / 4}, true
}

// walk sets the points of a curve on a grid gw by gh, and of the lines
// between them, and returns its last point, and whether there was one.
func walk(pts []Point, x0, x1, y0, y1 float64, gw, gh int, set func(canvas.Point)) (canvas.Point, bool) {
	var prev, last canvas.Point
	havePrev, any := false, false
	for _, p := range pts {
		if !p.OK || math.IsNaN(p.X) || math.IsNaN(p.Y) {
			havePrev = false
			continue
		}
		g := canvas.Point{X: scaleTo(p.X, x0, x1, gw), Y: gh - 1 - scaleTo(p.Y, y0, y1, gh)}
		if havePrev {
			for _, q := range graph.GetLinePoints(prev, g) {
				set(q)
			}
		} else {
			set(g)
		}
		prev, last, havePrev, any = g, g, true, true
	}
	return last, any
}

// label puts r near cell at, in a cell no other label took.
func (c *XY) label(at canvas.Point, r rune, owner int, taken map[canvas.Point]bool) {
	x := min(at.X+1, c.width-1)
	for d := 0; d < 2*c.rows; d++ {
		// 0, -1, +1, -2, +2...: above first, the usual way a curve rises.
		dy := (d + 1) / 2
		if d%2 == 1 {
			dy = -dy
		}
		p := canvas.Point{X: x, Y: at.Y + dy}
		if p.Y < 0 || p.Y >= c.rows || taken[p] {
			continue
		}
		taken[p] = true
		c.cells[p.Y][p.X], c.owner[p.Y][p.X] = r, owner
		return
	}
}

// scaleTo maps v in lo..hi to 0..n-1, clamped.
func scaleTo(v, lo, hi float64, n int) int {
	if hi <= lo {
		return 0
	}
	k := int(math.Round((v - lo) / (hi - lo) * float64(n-1)))
	return min(max(k, 0), n-1)
}
