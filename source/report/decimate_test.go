package report

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDecimateKeepsEveryPeak: over a noisy line with rare spikes, every
// bucket's highest and lowest point are in the output, at most two points
// a bucket are, and the global extremes survive.
func TestDecimateKeepsEveryPeak(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, buckets = 20000, 100
	xs := make([]float64, n)
	ys := make([]float64, n)
	for i := range n {
		xs[i] = float64(i) * 0.2
		ys[i] = 100 + r.Float64()
		if r.IntN(500) == 0 {
			ys[i] = 1000 + r.Float64()*1000 // a stall
		}
	}
	x1 := xs[n-1]
	segs := Decimate(xs, ys, 0, x1, buckets)
	if len(segs) != 1 {
		t.Fatalf("%d segments, want 1 (no gaps)", len(segs))
	}
	out := segs[0]
	if len(out) > 2*(buckets+1) {
		t.Errorf("%d points for %d buckets, want at most two each", len(out), buckets)
	}
	kept := map[Point]bool{}
	for _, p := range out {
		kept[p] = true
	}
	width := x1 / buckets
	hi := map[int]Point{}
	lo := map[int]Point{}
	for i := range n {
		b := int(math.Floor(xs[i] / width))
		if p, ok := hi[b]; !ok || ys[i] > p.Y {
			hi[b] = Point{xs[i], ys[i]}
		}
		if p, ok := lo[b]; !ok || ys[i] < p.Y {
			lo[b] = Point{xs[i], ys[i]}
		}
	}
	for b, p := range hi {
		if !kept[p] {
			t.Errorf("bucket %d: peak %v lost", b, p)
		}
		if !kept[lo[b]] {
			t.Errorf("bucket %d: trough %v lost", b, lo[b])
		}
	}
	for i := 1; i < len(out); i++ {
		if out[i].X < out[i-1].X {
			t.Fatalf("points out of order at %d: %v after %v", i, out[i], out[i-1])
		}
	}
}

// TestDecimateBreaksAtAbsent: a NaN (absent) splits the line, and a lone
// point between two gaps stays.
func TestDecimateBreaksAtAbsent(t *testing.T) {
	nan := math.NaN()
	xs := []float64{0, 1, 2, 3, 4, 5, 6}
	ys := []float64{1, 2, nan, 3, nan, 4, 5}
	segs := Decimate(xs, ys, 0, 6, 1000)
	want := [][]Point{{{0, 1}, {1, 2}}, {{3, 3}}, {{5, 4}, {6, 5}}}
	if len(segs) != len(want) {
		t.Fatalf("segments %v, want %v", segs, want)
	}
	for i := range want {
		if len(segs[i]) != len(want[i]) {
			t.Fatalf("segments %v, want %v", segs, want)
		}
		for j := range want[i] {
			if segs[i][j] != want[i][j] {
				t.Errorf("segment %d point %d: %v, want %v", i, j, segs[i][j], want[i][j])
			}
		}
	}
}
