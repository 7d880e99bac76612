package page

import (
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
)

func labels(ts []plot.Tick) string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return strings.Join(out, " ")
}

// TestScales: a value axis ends at the next whole step of 1, 2 or 5 times
// a power of ten above its data, in one unit named in its title, with
// labels at every step: never gonum's own 25.36 / 25.4 / 25.44 MiB.
func TestScales(t *testing.T) {
	const MiB = 1 << 20
	for _, tt := range []struct {
		name  string
		s     axisScale
		title string
		min   float64
		max   float64
		ticks string
	}{
		{"memory up to 47 MiB", bytesScale(0, 47*MiB), "memory (MiB)", 0, 50 * MiB, "0 10 20 30 40 50"},
		{"memory up to 51 MiB", bytesScale(0, 51*MiB), "memory (MiB)", 0, 60 * MiB, "0 20 40 60"},
		{"memory up to 19.4 MiB", bytesScale(0, 19.4*MiB), "memory (MiB)", 0, 20 * MiB, "0 5 10 15 20"},
		{"rounding up reaches GiB", bytesScale(0, 1010*MiB), "memory (GiB)", 0, 1 << 30, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{"a narrow footprint", bytesScale(25.36*MiB, 25.48*MiB), "memory (MiB)", 25.35 * MiB, 25.5 * MiB, "25.35 25.40 25.45 25.50"},
		{"bytes", bytesScale(0, 700), "memory (B)", 0, 800, "0 200 400 600 800"},
		{"ops/s", countScale(27300), "ops/s", 0, 30000, "0 10,000 20,000 30,000"},
		{"ops/s below one", countScale(0.7), "ops/s", 0, 0.8, "0.0 0.2 0.4 0.6 0.8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			what, _, _ := strings.Cut(tt.title, " (")
			if got := s.Title(what); got != tt.title {
				t.Errorf("title %q, want %q", got, tt.title)
			}
			if !near(s.Min, tt.min) || !near(s.Max, tt.max) {
				t.Errorf("range %v to %v, want %v to %v", s.Min, s.Max, tt.min, tt.max)
			}
			if got := labels(s.Ticks(s.Min, s.Max)); got != tt.ticks {
				t.Errorf("ticks %q, want %q", got, tt.ticks)
			}
		})
	}
}

func near(a, b float64) bool { return a == b || (a-b)/b < 1e-9 && (b-a)/b < 1e-9 }

// TestStep125: every step is 1, 2 or 5 times a power of ten, and cuts the
// span into at most maxSteps.
func TestStep125(t *testing.T) {
	for _, span := range []float64{0.0031, 0.7, 1, 3, 9.9, 10, 11, 47, 99, 101, 250, 999, 1e6 + 1, 3.3e9} {
		st := step125(span)
		m := st
		for m >= 10 {
			m /= 10
		}
		for m < 1 {
			m *= 10
		}
		if !near(m, 1) && !near(m, 2) && !near(m, 5) {
			t.Errorf("span %v: step %v is not 1, 2 or 5 times a power of ten", span, st)
		}
		if span/st > maxSteps+1e-9 || span/st <= maxSteps/2.5-1e-9 {
			t.Errorf("span %v: step %v cuts it into %.2f", span, st, span/st)
		}
	}
}

// TestLogTicks: a log axis of PING round trips is labelled at round
// milliseconds.
func TestLogTicks(t *testing.T) {
	lo, hi := logRange(0.043, 117)
	if lo != 0.02 || hi != 200 {
		t.Errorf("range %v to %v, want 0.02 to 200", lo, hi)
	}
	if got := labels(logTicks{}.Ticks(log10of(lo), log10of(hi))); got != "0.1 1 10 100" {
		t.Errorf("ticks %q", got)
	}
	if got := labels(logTicks{}.Ticks(log10of(2), log10of(50))); got != "2 5 10 20 50" {
		t.Errorf("ticks %q over two decades", got)
	}
}

func log10of(v float64) float64 { return log10([]float64{v})[0] }

// TestClockTicks: the time axis is the time of day of the recording, at a
// round step of the clock, its zone and day in the title.
func TestClockTicks(t *testing.T) {
	epoch := time.Date(2026, 12, 4, 17, 20, 52, 566e6, time.UTC)
	c := clockTicks{epoch: epoch}
	if got := labels(c.Ticks(0, 70)); got != "17:21:00 17:21:15 17:21:30 17:21:45 17:22:00" {
		t.Errorf("70 s: %q", got)
	}
	if got := labels(c.Ticks(0, 3600)); got != "17:30 17:40 17:50 18:00 18:10 18:20" {
		t.Errorf("an hour: %q", got)
	}
	if got := c.Title(0); got != "time of day (UTC), 4 Dec 2026" {
		t.Errorf("title %q", got)
	}
	late := clockTicks{epoch: time.Date(2026, 12, 4, 23, 50, 0, 0, time.FixedZone("", 3600))}
	if got := labels(late.Ticks(0, 1200)); got != "4 Dec 23:50 4 Dec 23:55 5 Dec 00:00 5 Dec 00:05 5 Dec 00:10" {
		t.Errorf("over midnight: %q", got)
	}
	if got := late.Title(0); got != "time of day (UTC+01:00), 4 Dec 2026" {
		t.Errorf("title %q", got)
	}
}
