package plot

import (
	"math"
	"time"

	"github.com/vkwatch/vkwatch/ui/chart"
)

// What a pane and a fleet row draw alike: their scale tops and their
// charts, from their columns. Each wraps the rows in its own way (a
// pane's scale, a row's colour).

// PlotSet is one pane's or one row's charts, by chart index, made on
// first use, and the scale top each was last drawn at.
type PlotSet struct {
	lines    []*chart.Line
	bars     []*chart.Bars
	drawnTop []float64
}

// Draw draws chart i from c, w x rows, on a scale to top (NaN:
// none), when all is set or its columns or its top changed since it was
// last drawn; it reports whether it drew. A chart that did not change
// keeps its rows: most samples land in a column that already held a
// larger value.
func (s *PlotSet) Draw(c *Columns, i, w, rows int, top float64, all, ascii bool) ([]string, bool) {
	if s.drawnTop == nil {
		n := len(Charts)
		s.lines, s.bars, s.drawnTop = make([]*chart.Line, n), make([]*chart.Bars, n), make([]float64, n)
	}
	if !all && !c.dirty[i] && sameTop(s.drawnTop[i], top) {
		return nil, false
	}
	c.dirty[i], s.drawnTop[i] = false, top
	if math.IsNaN(top) {
		top = Charts[i].Unit.MinTop() // nothing is drawn anyway
	}
	if Charts[i].Draw == DrawBars {
		if s.bars[i] == nil {
			s.bars[i] = chart.NewBars(w, rows)
			s.bars[i].ASCII = ascii
		}
		s.bars[i].Resize(w, rows)
		return s.bars[i].Draw(&c.cells[i], top), true
	}
	if s.lines[i] == nil {
		s.lines[i] = chart.NewLine(w, rows)
		s.lines[i].ASCII = ascii
	}
	s.lines[i].Resize(w, rows)
	return s.lines[i].Draw(&c.sub[i], top), true
}

// sameTop reports whether two scale tops are the same (NaN: none).
func sameTop(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// ScaleTops is the top of each member's scale of each chart (the
// members are panes' or fleet rows' columns; NaN where there is nothing
// to scale): the round step above the largest value in the window of the
// chart's scale group, over every member (the same memory draws at the
// same height in each) or over each alone (own), held between frames by
// holds at the data's time now. Only the charts counted says count (nil:
// all).
func ScaleTops(cols []*Columns, counted []bool, own bool, holds Holds, now time.Duration) [][]float64 {
	n := len(Charts)
	tops, all := make([][]float64, len(cols)), make([]float64, len(cols)*n)
	for i := range tops {
		tops[i] = all[i*n : (i+1)*n : (i+1)*n]
	}
	mine := make([]float64, len(cols))
	mineOK := make([]bool, len(cols))
	for _, g := range groups() {
		shared, sharedOK := 0.0, false
		u := UnitBytes
		for i, c := range cols {
			mine[i], mineOK[i] = 0, false
			for k, mt := range Charts {
				if mt.Group == g && c.PeakOK[k] && (counted == nil || counted[k]) {
					mine[i], mineOK[i] = max(mine[i], c.Peak[k]), true
					shared, sharedOK = max(shared, c.Peak[k]), true
				}
				if mt.Group == g {
					u = mt.Unit
				}
			}
		}
		sharedTop := math.NaN()
		if sharedOK && !own {
			sharedTop = holds.follow(scaleKey{group: g}, u, shared, now)
		}
		for i, c := range cols {
			top := sharedTop
			if own && mineOK[i] {
				top = holds.follow(scaleKey{cols: c, group: g}, u, mine[i], now)
			} else if own {
				top = math.NaN() // nothing to scale: n/a
			}
			for k, mt := range Charts {
				if mt.Group == g {
					tops[i][k] = top
				}
			}
		}
	}
	return tops
}
