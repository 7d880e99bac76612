package plot

import (
	"time"

	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/chart"
)

// ColsKey is what the columns were computed from; Sub is the time one
// braille column (half a cell) covers.
type ColsKey struct {
	version uint64
	right   int64 // the right edge, in sub-columns
	plotW   int
	Sub     time.Duration
}

// Columns are a node's chart columns, per chart, from the store's
// points: two per cell for braille lines, and one per cell for bars,
// with the largest value in the window. A pane keeps one set, a fleet
// row another (narrower): both from the same store.
type Columns struct {
	sub, cells []chart.Series
	Peak       []float64 // the largest value in the window, per chart
	PeakOK     []bool
	colsFor    ColsKey
	colsOK     bool
	buckets    buckets
	// dirty says a chart's columns changed since its chart was drawn.
	dirty []bool
}

// NewColumns returns empty columns for every chart.
func NewColumns() Columns {
	n := len(Charts)
	return Columns{sub: make([]chart.Series, n), cells: make([]chart.Series, n),
		Peak: make([]float64, n), PeakOK: make([]bool, n), dirty: make([]bool, n)}
}

// For is what the columns were last computed from.
func (p *Columns) For() ColsKey { return p.colsFor }

// Invalidate makes the next Fill compute every column again (the charts'
// width changed).
func (p *Columns) Invalidate() { p.colsOK = false }

// BucketOf is the time one cell covers for a window drawn plotW cells
// wide: never shorter than the sampling interval, or cells between
// samples would stay empty.
func BucketOf(window, interval time.Duration, plotW int) time.Duration {
	dt := window / time.Duration(max(plotW, 1))
	return max(dt, interval, 2*time.Millisecond)
}

// Cadence is how often samples come: every interval at most (the finest
// column), every rest at least while the server answers (a longer hole
// breaks the line).
type Cadence struct{ Interval, Rest time.Duration }

// Fill brings the columns up to date with the view for charts w cells
// wide, and the largest value in the window of each chart. When only new
// samples came (the right edge is in the same column), only they are
// added; otherwise every column is computed again.
func (p *Columns) Fill(v store.View, now, window time.Duration, c Cadence, w int) {
	sub := BucketOf(window, c.Interval, w) / 2
	k := ColsKey{version: v.Version, right: int64(now / sub), plotW: w, Sub: sub}
	if p.colsOK && k == p.colsFor {
		return
	}
	b := &p.buckets
	pts := v.Points
	same := p.colsOK && k.plotW == p.colsFor.plotW && k.Sub == p.colsFor.Sub
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
		b.reset(2*w, sub, c.Rest)
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
	for i, mt := range Charts {
		if mt.Draw == DrawBars {
			pairs(&p.cells[i], &p.sub[i], w)
		}
		p.Peak[i], p.PeakOK[i] = p.sub[i].Max()
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
	prevV   []float64 // per chart
	prevOK  []bool
}

// reset empties the buckets for n columns of dt, keeping their arrays.
func (b *buckets) reset(n int, dt, interval time.Duration) {
	v, ok := b.prevV, b.prevOK
	if v == nil {
		v, ok = make([]float64, len(Charts)), make([]bool, len(Charts))
	}
	*b = buckets{n: n, dt: dt, interval: interval, prevV: v, prevOK: ok}
}

// add puts sample i of pts, newer than the last one added, into out, and
// marks the charts whose columns it changed.
func (b *buckets) add(out []chart.Series, dirty []bool, pts store.Series, i int, now time.Duration) {
	off := pts.Offsets[i]
	col := Column(off, now, b.dt, b.n)
	if col >= b.n || off > now {
		// Newer than a frozen (paused) right edge: the edge's column
		// spans past now, and samples after the pause stay out.
		return
	}
	hole := b.hasPrev && off-b.prevOff > 3*b.interval
	for m := range Charts {
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
		for m := range Charts {
			if v, ok := pts.Value(m, i); ok != b.prevOK[m] || (ok && v != b.prevV[m]) {
				return false
			}
		}
		return true
	}
	return false
}

// Column is the column time t falls in, of n columns of dt each, the last
// one ending at now: n-1 at now, negative before the first, n or more
// after now.
func Column(t, now, dt time.Duration, n int) int {
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
