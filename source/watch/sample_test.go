package watch

import (
	"testing"
	"time"
)

// TestSampleWaitOnGrid: the sampler's next wake-up is the next point of its
// grid (multiples of the interval, shifted by half the greatest common
// divisor of the two intervals), strictly after now and at most one
// interval away, the same for every sampler of the process with the same
// intervals.
func TestSampleWaitOnGrid(t *testing.T) {
	const iv, ping = 200 * time.Millisecond, 2 * time.Millisecond
	phase := int64(ping / 2) // gcd(200 ms, 2 ms) / 2
	for _, now := range []int64{0, 1, phase - 1, phase, phase + 1, int64(iv) + phase, 7*int64(iv) + 12345, 1e12 + 3} {
		d := sampleWait(now, iv, ping)
		at := now + int64(d)
		if d <= 0 || d > iv {
			t.Errorf("now %d: wait %v, want in (0, %v]", now, d, iv)
		}
		if (at-phase)%int64(iv) != 0 {
			t.Errorf("now %d: wakes at %d, off the grid (%d + k*%d)", now, at, phase, int64(iv))
		}
		if now >= phase && (at-phase)/int64(iv) != (now-phase)/int64(iv)+1 {
			t.Errorf("now %d: wakes at %d, not the first grid point after now", now, at)
		}
	}
	if d := sampleWait(5, iv, 0); d != iv-5 {
		t.Errorf("no probe: wait %v, want %v", d, iv-5)
	}
}

// TestSamplesMissThePINGs: for the defaults, a fleet's budgets and odd
// intervals, 1,000 samples in a row each stay at least half the greatest
// common divisor of the intervals from every PING of the probe's grid.
func TestSamplesMissThePINGs(t *testing.T) {
	for _, c := range []struct {
		iv, ping time.Duration
		apart    time.Duration
	}{
		{200 * time.Millisecond, 2 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 6 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 16 * time.Millisecond, 4 * time.Millisecond},
		{200 * time.Millisecond, 7 * time.Millisecond, 500 * time.Microsecond},
		{300 * time.Millisecond, 200 * time.Millisecond, 50 * time.Millisecond},
		{10 * time.Millisecond, 1500 * time.Microsecond, 250 * time.Microsecond},
	} {
		now := int64(12345)
		for range 1000 {
			now += int64(sampleWait(now, c.iv, c.ping))
			off := now % int64(c.ping)
			dist := min(off, int64(c.ping)-off)
			if dist < int64(c.apart) {
				t.Fatalf("interval %v, PING every %v: a sample at %d is %v from a PING, want at least %v",
					c.iv, c.ping, now, time.Duration(dist), c.apart)
			}
		}
	}
}
