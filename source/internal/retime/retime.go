// Package retime is an interval that one running loop follows while other
// goroutines change it: the probe's PING interval and the watcher's INFO
// interval, which the fleet's attention moves.
package retime

import (
	"sync/atomic"
	"time"
)

// Interval is the interval in force and the wake-up of the loop that
// follows it. Make it with New.
type Interval struct {
	ns   atomic.Int64
	wake chan struct{}
}

// New returns an Interval of d.
func New(d time.Duration) *Interval {
	i := &Interval{wake: make(chan struct{}, 1)}
	i.ns.Store(int64(d))
	return i
}

// Set makes d the interval and wakes the loop (one wake-up stands for any
// number of changes it has not yet seen). It reports whether the interval
// changed: d <= 0, or the interval already in force, does nothing.
func (i *Interval) Set(d time.Duration) bool {
	if d <= 0 || i.ns.Swap(int64(d)) == int64(d) {
		return false
	}
	select {
	case i.wake <- struct{}{}:
	default:
	}
	return true
}

// Get is the interval in force.
func (i *Interval) Get() time.Duration { return time.Duration(i.ns.Load()) }

// Changed receives after a Set that changed the interval: the loop reads
// Get again.
func (i *Interval) Changed() <-chan struct{} { return i.wake }
