package plot

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestRoundTop(t *testing.T) {
	const kib, mib = 1 << 10, 1 << 20
	for _, c := range []struct {
		u         Unit
		v         float64
		top, half string
	}{
		{UnitBytes, 0, "5 KiB", "2.5 KiB"}, // the smallest: a page and more
		{UnitBytes, 4 * kib, "5 KiB", "2.5 KiB"},
		{UnitBytes, 6.98 * mib, "10 MiB", "5 MiB"},
		{UnitBytes, 78.7 * mib, "100 MiB", "50 MiB"},
		{UnitBytes, 125 * mib, "200 MiB", "100 MiB"},
		{UnitBytes, 600 * kib, "1 MiB", "0.5 MiB"}, // 1000 KiB is not a step: 1 MiB is
		{UnitBytes, 37.6 * mib, "50 MiB", "25 MiB"},
		{UnitBytes, 3 << 40, "5 TiB", "2.5 TiB"},
		{UnitRate, 0, "10/s", "5/s"}, // never "1/s / 0/s"
		{UnitRate, 27.3e3, "50k/s", "25k/s"},
		{UnitRate, 58e3, "100k/s", "50k/s"},
		{UnitRate, 999, "1k/s", "0.5k/s"},
		{UnitLatency, float64(4620 * time.Microsecond), "5ms", "2.5ms"},
		{UnitLatency, float64(2150 * time.Microsecond), "5ms", "2.5ms"},
		{UnitLatency, float64(410 * time.Microsecond), "500µs", "250µs"},
		{UnitLatency, float64(3 * time.Second), "5s", "2.5s"},
	} {
		top := c.u.RoundTop(c.v)
		if got, half := c.u.ScaleText(top, top), c.u.ScaleText(top/2, top); got != c.top || half != c.half {
			t.Errorf("unit %d, %g: scale %q / %q, want %q / %q", c.u, c.v, got, half, c.top, c.half)
		}
		if top < c.v {
			t.Errorf("unit %d, %g: top %g under the value", c.u, c.v, top)
		}
	}
	// Every step reads in one unit, without a fraction the eye must do.
	for _, u := range []Unit{UnitBytes, UnitRate, UnitLatency} {
		for v := u.MinTop(); v < 1e13; v = u.RoundTop(v) * 1.01 {
			top := u.RoundTop(v)
			for _, s := range []string{u.ScaleText(top, top), u.ScaleText(top/2, top)} {
				if strings.Contains(s, ".") && !strings.HasPrefix(s, "0.5") && !strings.Contains(s, ".5") {
					t.Errorf("unit %d: scale label %q is not round", u, s)
				}
			}
			if below := u.StepBelow(top); below != 0 && u.RoundTop(below) != below {
				t.Errorf("unit %d: the step under %g, %g, is not a step", u, top, below)
			}
		}
	}
}

func TestHeldTopGoesUpAtOnceDownAfterAWhile(t *testing.T) {
	const mib = 1 << 20
	var h heldTop
	sec := time.Second
	at := func(peak float64, now time.Duration) float64 { return h.follow(UnitBytes, peak*mib, now) / mib }
	if top := at(7, 0); top != 10 {
		t.Fatalf("first: %v MiB, want 10", top)
	}
	// Up at once, however briefly.
	if top := at(11, sec); top != 20 {
		t.Fatalf("a peak of 11 MiB: top %v, want 20 at once", top)
	}
	// The peak leaves the window: the scale stays a while.
	for s := 2; s <= 11; s++ {
		if top := at(7, time.Duration(s)*sec); top != 20 {
			t.Fatalf("at %ds, %v MiB, want 20 still (down only after %s under a lower step)", s, top, holdDown)
		}
	}
	if top := at(7, 12*sec); top != 10 {
		t.Fatalf("after %s under 10 MiB: %v MiB, want 10", holdDown, top)
	}
	// Around a step it does not flap: up at once, then held.
	at(11, 13*sec)
	for s := 14; s < 20; s++ {
		v := 9.0
		if s%2 == 0 {
			v = 10.5
		}
		if top := at(v, time.Duration(s)*sec); top != 20 {
			t.Fatalf("a max flapping around 10 MiB moved the scale at %ds: %v", s, top)
		}
	}
	// A replay that seeks back, or a scale not drawn for long, starts again.
	if top := at(3, 5*sec); top != 5 {
		t.Errorf("after a seek back: %v MiB, want 5", top)
	}
	if top := at(30, 6*sec); top != 50 {
		t.Errorf("%v", top)
	}
	if top := at(3, 6*sec+holdDown+sec); top != 5 {
		t.Errorf("not drawn for longer than %s: %v MiB, want a fresh 5", holdDown, top)
	}
}

func TestScaleTopsRoundAndShared(t *testing.T) {
	a, b := NewColumns(), NewColumns()
	cow := Index("cow")
	a.Peak[cow], a.PeakOK[cow] = 1<<20, true
	b.Peak[cow], b.PeakOK[cow] = 111<<20, true
	holds := Holds{}
	tops := ScaleTops([]*Columns{&a, &b}, nil, false, holds, 0)
	if tops[0][cow] != 200<<20 || tops[1][cow] != 200<<20 {
		t.Errorf("shared: %v, %v; want both 200 MiB", tops[0][cow], tops[1][cow])
	}
	tops = ScaleTops([]*Columns{&a, &b}, nil, true, holds, 0)
	if tops[0][cow] != 1<<20 || tops[1][cow] != 200<<20 {
		t.Errorf("per pane: %v, %v; want 1 MiB and 200 MiB", tops[0][cow], tops[1][cow])
	}
	if ops := Index("ops"); !math.IsNaN(tops[0][ops]) {
		t.Errorf("nothing to scale is NaN (n/a), got %v", tops[0][ops])
	}
}
