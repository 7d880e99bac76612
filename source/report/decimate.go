package report

import "math"

// Point is one point of a figure's line.
type Point struct{ X, Y float64 }

// Decimate cuts the line through (xs[i], ys[i]) to at most two points per
// bucket of an x range [x0, x1] split into buckets equal parts (a figure's
// columns): the lowest and the highest point of each bucket, in their x
// order. Every peak and every trough a figure of that resolution can show
// is kept, where averaging or keeping every n-th point would hide the
// stall a save causes. A NaN y (absent) ends a segment: the line breaks
// rather than pretend a value. xs must be in increasing order.
func Decimate(xs, ys []float64, x0, x1 float64, buckets int) [][]Point {
	if buckets < 1 || x1 <= x0 {
		buckets = 1
	}
	width := (x1 - x0) / float64(buckets)
	bucketOf := func(x float64) int {
		if width <= 0 {
			return 0
		}
		return int(math.Floor((x - x0) / width))
	}
	var segs [][]Point
	var seg []Point
	// The bucket being filled: its first index and its extremes.
	cur, lo, hi := math.MinInt, -1, -1
	flush := func() {
		if lo < 0 {
			return
		}
		a, b := lo, hi
		if a > b {
			a, b = b, a
		}
		seg = append(seg, Point{xs[a], ys[a]})
		if b != a {
			seg = append(seg, Point{xs[b], ys[b]})
		}
		lo, hi = -1, -1
	}
	endSeg := func() {
		flush()
		if len(seg) > 0 {
			segs = append(segs, seg)
			seg = nil
		}
	}
	n := min(len(xs), len(ys))
	for i := range n {
		y := ys[i]
		if math.IsNaN(y) || math.IsInf(y, 0) {
			endSeg()
			cur = math.MinInt
			continue
		}
		if b := bucketOf(xs[i]); b != cur {
			flush()
			cur = b
		}
		if lo < 0 || y < ys[lo] {
			lo = i
		}
		if hi < 0 || y > ys[hi] {
			hi = i
		}
	}
	endSeg()
	return segs
}

// Extent is the smallest and largest finite value of vs; ok is false when
// there is none.
func Extent(vs ...[]float64) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range vs {
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			lo, hi, ok = math.Min(lo, v), math.Max(hi, v), true
		}
	}
	return lo, hi, ok
}

// Curve is a save's cost against its progress, as two lines: the
// copy-on-write and the footprint (bytes) against the keys processed
// (percent), each with its peak.
type Curve struct {
	COW, Footprint         [][]Point
	PeakCOW, PeakFootprint Point
	HaveCOW, HaveFootprint bool
}

// CostCurve is the save's Curve, decimated to buckets columns over 0-100 %.
// The COW peak is the report's own (PeakCOW at PeakAtProgress), which every
// sample of the save counted, whether or not it knew the progress.
func (s *Save) CostCurve(buckets int) Curve {
	var c Curve
	n := len(s.Curve)
	xs := make([]float64, n)
	cow := make([]float64, n)
	foot := make([]float64, n)
	for i, p := range s.Curve {
		xs[i] = p.Progress * 100
		cow[i], foot[i] = optF(p.COW), optF(p.Footprint)
	}
	c.COW = Decimate(xs, cow, 0, 100, buckets)
	c.Footprint = Decimate(xs, foot, 0, 100, buckets)
	if v, ok := s.PeakCOW.Get(); ok {
		if at, ok := s.PeakAtProgress.Get(); ok {
			c.PeakCOW, c.HaveCOW = Point{at * 100, float64(v)}, true
		}
	}
	for i := range foot {
		if !math.IsNaN(foot[i]) && (!c.HaveFootprint || foot[i] > c.PeakFootprint.Y) {
			c.PeakFootprint, c.HaveFootprint = Point{xs[i], foot[i]}, true
		}
	}
	return c
}
