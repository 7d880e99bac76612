package page

import (
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"

	"github.com/vkwatch/vkwatch/source/units"
)

// maxSteps is the most intervals a value axis is cut into: five labelled
// ticks and the zero, read at a glance.
const maxSteps = 5

// step125 is the smallest step of 1, 2 or 5 times a power of ten that
// cuts span into at most maxSteps intervals.
func step125(span float64) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	mag := math.Pow10(int(math.Floor(math.Log10(span / maxSteps))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(m*mag) <= maxSteps*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// axisScale is a value axis: its range in whole steps of 1, 2 or 5 times a
// power of ten, in one unit chosen once for the whole axis, and the title
// that names the unit.
type axisScale struct {
	Min, Max float64 // in the data's own unit (bytes, ops/s)
	step     float64 // in the axis's unit
	div      float64 // data unit per axis unit (1 MiB = 1048576 bytes)
	Unit     string  // "MiB", or "" for a plain count
	count    bool    // labels with thousands separators
}

// bytesScale is the axis of bytes from lo to hi (lo 0 for an axis that
// starts at none), in the binary unit of its top.
func bytesScale(lo, hi float64) axisScale {
	div, unit := units.Scale(math.Max(math.Abs(lo), math.Abs(hi)))
	s := roundScale(lo/div, hi/div)
	if s.Max >= 1024 && unit != "TiB" {
		// Rounding up reached the next unit (1,010 MiB to 1,500 MiB):
		// label it in that one (1.5 GiB).
		div *= 1024
		s = roundScale(lo/div, hi/div)
		_, unit = units.Scale(div)
	}
	s.Min, s.Max, s.div, s.Unit = s.Min*div, s.Max*div, div, unit
	return s
}

// countScale is the axis of a count per second from 0 to hi.
func countScale(hi float64) axisScale {
	s := roundScale(0, hi)
	s.div, s.count = 1, true
	return s
}

// roundScale widens [lo, hi] to whole steps of step125.
func roundScale(lo, hi float64) axisScale {
	if !(hi > lo) {
		hi = lo + 1
	}
	st := step125(hi - lo)
	// A step that does not cover the range once widened (lo 3, hi 11,
	// step 2: 2 to 12 is 5 steps, fine; lo 3.9, hi 13.1: 2 to 14 is 6)
	// moves up a size.
	for {
		a, b := math.Floor(lo/st)*st, math.Ceil(hi/st)*st
		if (b-a)/st <= maxSteps*(1+1e-9) {
			return axisScale{Min: a, Max: b, step: st, div: 1}
		}
		st = step125(st * (maxSteps + 1))
	}
}

// Title is an axis title with its unit: "memory (MiB)".
func (s axisScale) Title(what string) string {
	if s.Unit == "" {
		return what
	}
	return what + " (" + s.Unit + ")"
}

// Ticks implements plot.Ticker: a labelled tick at every step of the
// range, the labels in the axis's unit (which the title names).
func (s axisScale) Ticks(lo, hi float64) []plot.Tick {
	prec := max(0, -int(math.Floor(math.Log10(s.step)+1e-9)))
	var ts []plot.Tick
	first := math.Ceil(lo/s.div/s.step - 1e-9)
	for i := first; i*s.step*s.div <= hi*(1+1e-9)+1e-12; i++ {
		v := i * s.step
		if v == 0 {
			v = 0 // not -0
		}
		label := strconv.FormatFloat(v, 'f', prec, 64)
		if s.count && prec == 0 {
			label = units.CountFloat(v)
		}
		ts = append(ts, plot.Tick{Value: v * s.div, Label: label})
	}
	return ts
}

// logRange is a log axis's range: the 1-2-5 values at or below lo and at
// or above hi.
func logRange(lo, hi float64) (float64, float64) {
	down := func(v float64) float64 {
		mag := math.Pow10(int(math.Floor(math.Log10(v))))
		for _, m := range []float64{5, 2, 1} {
			if m*mag <= v*(1+1e-9) {
				return m * mag
			}
		}
		return mag
	}
	up := func(v float64) float64 {
		mag := math.Pow10(int(math.Floor(math.Log10(v))))
		for _, m := range []float64{1, 2, 5, 10} {
			if m*mag >= v*(1-1e-9) {
				return m * mag
			}
		}
		return 10 * mag
	}
	return down(lo), up(hi)
}

// logTicks labels a log axis, whose values are the log10 of what it
// shows (gonum's LogScale centres the axis title on the arithmetic middle
// of the range, near the top of a log axis): at 1, 2 and 5 times each
// power of ten when it spans two decades or less, else at the powers of
// ten.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	ms := []float64{1, 2, 5}
	if hi-lo > 2 {
		ms = []float64{1}
	}
	var ts []plot.Tick
	for e := math.Floor(lo); e <= math.Ceil(hi); e++ {
		for _, m := range ms {
			v := m * math.Pow10(int(e))
			if l := math.Log10(v); l >= lo-1e-9 && l <= hi+1e-9 {
				ts = append(ts, plot.Tick{Value: l, Label: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
	}
	return ts
}

// clockSteps are the steps of a time-of-day axis, seconds: round on a
// clock's face.
var clockSteps = []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}

// clockTicks labels an axis of seconds since epoch with the time of day
// in epoch's zone, at a round step of the clock (every 10 s, 5 min, 1 h).
type clockTicks struct{ epoch time.Time }

// Ticks implements plot.Ticker.
func (c clockTicks) Ticks(lo, hi float64) []plot.Tick {
	step := clockSteps[len(clockSteps)-1]
	for _, s := range clockSteps {
		if (hi-lo)/s <= 6 {
			step = s
			break
		}
	}
	t0 := c.epoch.Add(time.Duration(lo * float64(time.Second)))
	y, m, d := t0.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, t0.Location())
	// Seconds from the epoch to the first whole step of the day at or
	// after lo.
	sinceMidnight := t0.Sub(midnight).Seconds()
	first := lo + (math.Ceil(sinceMidnight/step-1e-9)*step - sinceMidnight)
	layout := "15:04"
	if step < 60 {
		layout = "15:04:05"
	}
	if !sameDay(c.at(lo), c.at(hi)) {
		layout = "2 Jan " + layout
	}
	var ts []plot.Tick
	for v := first; v <= hi+1e-9; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: c.at(v).Format(layout)})
	}
	return ts
}

func (c clockTicks) at(sec float64) time.Time {
	return c.epoch.Add(time.Duration(math.Round(sec * float64(time.Second))))
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

// Title is the time axis's title: the zone and the day it begins.
func (c clockTicks) Title(lo float64) string {
	t := c.at(lo)
	return "time of day (" + zoneName(t) + "), " + t.Format("2 Jan 2006")
}

// zoneName is t's zone as a reader knows it: UTC, CET, or +01:00.
func zoneName(t time.Time) string {
	if n := t.Format("MST"); n != "" && n[0] != '+' && n[0] != '-' {
		return n
	}
	return "UTC" + t.Format("-07:00")
}
