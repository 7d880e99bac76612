package chart

import (
	"strings"

	"github.com/NimbleMarkets/ntcharts/canvas"
)

// ASCII drawing, for terminals and fonts without braille or UTF-8
// (vkwatch --ascii): the same charts in runes below 0x80. A line is one
// column per cell and three levels per row, _ - ', with | where it climbs
// or falls more than a row between two columns; a bar is # with its top
// cell _ or = as it is a third or two thirds full; an XY curve is * per
// cell it passes, its label at its end as in braille.

// asciiLevels are a line's marks in a cell, bottom third first.
var asciiLevels = [3]rune{'_', '-', '\''}

// drawASCII is Line.Draw in ASCII: the larger of each cell's two values.
func (l *Line) drawASCII(s *Series, top float64) []string {
	grid := make([][]rune, l.rows)
	for y := range grid {
		grid[y] = []rune(strings.Repeat(" ", l.width))
	}
	h := 3 * l.rows
	n := min(len(s.V), 2*l.width)
	off := 2*l.width - n
	prev, havePrev := 0, false
	for x := range l.width {
		level, ok, brk := 0, false, false
		for _, i := range []int{2*x - off, 2*x + 1 - off} {
			if i < 0 || i >= n || !s.OK[i] {
				continue
			}
			lv := h - 1 - dotRow(s.V[i], top, h)
			level, ok, brk = max(level, lv), true, brk || s.Brk[i]
		}
		if !ok {
			havePrev = false
			continue
		}
		row := l.rows - 1 - level/3
		grid[row][x] = asciiLevels[level%3]
		if havePrev && !brk {
			// A climb or a fall of more than a row: | in the rows between.
			from := l.rows - 1 - prev/3
			for y := min(from, row) + 1; y < max(from, row); y++ {
				grid[y][x] = '|'
			}
		}
		prev, havePrev = level, true
	}
	for y := range grid {
		l.out[y] = string(grid[y])
	}
	return l.out
}

// drawASCII is Bars.Draw in ASCII.
func (b *Bars) drawASCII(s *Series, top float64) []string {
	n := min(len(s.V), b.width)
	grid := make([][]rune, b.rows)
	for y := range grid {
		grid[y] = []rune(strings.Repeat(" ", b.width))
	}
	for i := range n {
		v := s.V[i]
		if !s.OK[i] || v <= 0 {
			continue
		}
		x := b.width - n + i
		h := max(min(v, top)/top*float64(b.rows), 1.0/3) // rows, a present value at least a third
		full := int(h)
		for y := 0; y < full; y++ {
			grid[b.rows-1-y][x] = '#'
		}
		if rest := h - float64(full); full < b.rows && rest > 1e-9 {
			grid[b.rows-1-full][x] = barTop(rest)
		}
	}
	for y := range grid {
		b.out[y] = string(grid[y])
	}
	return b.out
}

// barTop is the top cell of a bar that fills part of it.
func barTop(part float64) rune {
	switch {
	case part <= 1.0/3+1e-9:
		return '_'
	case part <= 2.0/3+1e-9:
		return '='
	}
	return '#'
}

// curveASCII is XY.curve in ASCII: * in every cell a curve passes.
func (c *XY) curveASCII(i int, pts []Point, x0, x1, y0, y1 float64) (canvas.Point, bool) {
	return walk(pts, x0, x1, y0, y1, c.width, c.rows, func(q canvas.Point) {
		c.cells[q.Y][q.X], c.owner[q.Y][q.X] = '*', i
	})
}
