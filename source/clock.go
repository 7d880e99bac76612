package source

import "time"

// Clock gives every sample of one vkwatch run its time: one wall-clock epoch
// read once at start, plus monotonic offsets. Offsets never go backwards and
// At = Epoch + Offset, so no timestamp mixes two kinds of clock (the seed
// experiment lost a batch of samples to exactly that mistake).
type Clock struct {
	start time.Time // carries Go's monotonic reading
	epoch time.Time // the same instant, wall clock only
}

// NewClock starts a clock now.
func NewClock() *Clock {
	now := time.Now()
	return &Clock{start: now, epoch: now.Round(0)}
}

// Epoch is the wall-clock time at which the clock started.
func (c *Clock) Epoch() time.Time { return c.epoch }

// Now returns the monotonic offset since the epoch and the matching wall time.
func (c *Clock) Now() (time.Duration, time.Time) {
	off := time.Since(c.start)
	return off, c.epoch.Add(off)
}

// Offset returns the monotonic offset since the epoch.
func (c *Clock) Offset() time.Duration { return time.Since(c.start) }

// At converts an offset into wall time.
func (c *Clock) At(off time.Duration) time.Time { return c.epoch.Add(off) }
