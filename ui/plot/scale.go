package plot

import (
	"math"
	"strconv"
	"time"
)

// Round scales. A chart's top is the next round step at or above the
// largest value in its window: 1, 2 or 5 times a power of ten of the
// unit the top reads in (bytes in binary units: 500 KiB, then 1 MiB), as
// btop and Grafana tick. Its middle label is half of it, and both labels
// read in the top's unit: "5 MiB / 2.5 MiB", never "4.00 KiB / 1.78 KiB".
//
// A top is held (heldTop): it goes up at once when a value passes it, and
// down only when the window's largest value has stayed at or under a
// lower step for holdDown, so a scale does not jump with every sample
// around a step, nor at once when a peak leaves the window.

// holdDown is how long the window's largest value must stay at or under a
// lower step before a scale comes down to it, in the data's time (the
// store's clock: a paused view or a replay holds as the data does).
const holdDown = 10 * time.Second

// steps are the round mantissas within one unit, ascending.
var steps = [...]float64{1, 2, 5, 10, 20, 50, 100, 200, 500}

// bases are the sizes of a unit's names, ascending: bytes in binary
// units, rates in thousands, latencies (in nanoseconds) in thousands
// (ns, µs, ms, s).
func (u Unit) bases() []float64 {
	if u == UnitBytes {
		return []float64{1, 1 << 10, 1 << 20, 1 << 30, 1 << 40, 1 << 50}
	}
	return []float64{1, 1e3, 1e6, 1e9}
}

// RoundTop is the smallest round step of the unit at or above v (and at
// least the unit's smallest top).
func (u Unit) RoundTop(v float64) float64 {
	v = max(v, u.MinTop())
	bases := u.bases()
	for _, b := range bases {
		for _, m := range steps {
			if b*m >= v {
				return b * m
			}
		}
	}
	// Past the largest name: powers of ten of it (1000 TiB reads fine).
	top := bases[len(bases)-1] * 1000
	for top < v {
		top *= 10
	}
	return top
}

// StepBelow is the round step under top: 5 MiB under 10 MiB, 500 KiB
// under 1 MiB. None (0) under the unit's smallest top.
func (u Unit) StepBelow(top float64) float64 {
	prev := 0.0
	for _, b := range u.bases() {
		for _, m := range steps {
			if b*m >= top {
				if prev < u.MinTop() {
					return 0
				}
				return prev
			}
			prev = b * m
		}
	}
	return top / 10
}

// scaleNames are the names of a unit's bases (bases), as a scale label
// ends: "5 MiB", "50k/s", "2.5ms".
var scaleNames = map[Unit][]string{
	UnitBytes:   {" B", " KiB", " MiB", " GiB", " TiB", " PiB"},
	UnitRate:    {"/s", "k/s", "M/s", "G/s"},
	UnitLatency: {"ns", "µs", "ms", "s"},
}

// scaleName is the unit a scale of top reads in: its size and name.
func (u Unit) scaleName(top float64) (float64, string) {
	bases := u.bases()
	i := 0
	for i+1 < len(bases) && top >= bases[i+1] {
		i++
	}
	return bases[i], scaleNames[u][i]
}

// ScaleText renders v on a scale topped at top, in the top's unit: "2.5
// MiB" on a 5 MiB scale, "500k/s" on a 1M/s one; zero is "0".
func (u Unit) ScaleText(v, top float64) string {
	if v == 0 {
		return "0"
	}
	div, name := u.scaleName(math.Abs(top))
	return strconv.FormatFloat(v/div, 'f', -1, 64) + name
}

// heldTop is one scale's top between frames.
type heldTop struct {
	top   float64
	under time.Duration // since when the largest value fits a lower step; -1: it does not
	seen  time.Duration // when the scale was last drawn
	ok    bool
}

// follow returns the scale's top for the window's largest value peak at
// the data's time now: up at once, down after holdDown under a lower
// step. A scale not drawn for holdDown (hidden, or a replay that
// seeked) starts again from peak.
func (h *heldTop) follow(u Unit, peak float64, now time.Duration) float64 {
	want := u.RoundTop(peak)
	if !h.ok || want > h.top || now < h.seen || now-h.seen > holdDown {
		*h = heldTop{top: want, under: -1, seen: now, ok: true}
		return want
	}
	h.seen = now
	switch {
	case want == h.top:
		h.under = -1
	case h.under < 0 || now < h.under:
		h.under = now
	case now-h.under >= holdDown:
		h.top, h.under = want, -1
	}
	return h.top
}

// Holds are the held tops of a set of charts (a model's panes, a
// fleet's rows), by scale: a group's shared one (cols nil) or one
// member's own.
type Holds map[scaleKey]*heldTop

type scaleKey struct {
	cols  *Columns
	group string
}

// follow is the held top of the scale key names, for peak at now.
func (s Holds) follow(k scaleKey, u Unit, peak float64, now time.Duration) float64 {
	h := s[k]
	if h == nil {
		h = &heldTop{}
		s[k] = h
	}
	return h.follow(u, peak, now)
}
