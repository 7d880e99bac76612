package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcFloorBytes is how much the monitor allocates, at least, between two
// garbage collections.
//
// Why: one server drawing keeps about 1 MB live and allocates 2-3 MB a
// second (frames, the renderer's copies of them, INFO replies). At the
// runtime's default (GOGC=100, a 4 MB heap goal at least) that is a
// collection about every second, each of which wakes both processors; on
// the 2-vCPU machine of the README's Performance section that was about a
// tenth of vkwatch's CPU with one idle server (`GOGC=400` in its
// environment: 0.84 x the CPU of the default, 4 rounds side by side). With
// this floor a collection comes every few seconds, for a few MB more
// resident. A fleet whose live heap passes the floor collects exactly as at
// GOGC=100: its memory bounds are untouched.
const gcFloorBytes = 8 << 20

// heapMinimum is the runtime's least heap goal at GOGC=100; the runtime
// scales it with GOGC.
const heapMinimum = 4 << 20

// gcPercentFor is the GOGC that lets a heap of live bytes grow by
// max(live, floor) before the next collection: 100 once live reaches floor,
// more below it, bounded so that the runtime's own least goal (heapMinimum
// scaled by the same GOGC) stays within live+floor.
func gcPercentFor(live, floor uint64) int {
	live = max(live, 1)
	if live >= floor {
		return 100
	}
	p := floor * 100 / live
	p = min(p, (live+floor)*100/heapMinimum)
	return max(100, int(p))
}

// gcFloor sets GOGC after every collection from the live heap it left.
type gcFloor struct {
	floor  uint64
	sample []metrics.Sample

	mu      sync.Mutex
	stopped bool
	percent int
}

// gcSentinel is the object whose collection signals a finished cycle. It
// holds a pointer so that the tiny allocator, whose objects may never be
// collected on their own, does not take it.
type gcSentinel struct {
	_ *byte
	_ [8]byte
}

// startGCFloor keeps at least floor bytes of allocation between two
// collections until stop is called, which gives GOGC back its default. A
// GOGC in the environment is the user's choice and is left alone: the
// result is nil then (stop and current take a nil floor).
func startGCFloor(floor uint64) *gcFloor {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	g := &gcFloor{floor: floor, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}, percent: 100}
	g.mu.Lock()
	g.adjustLocked()
	g.mu.Unlock()
	g.arm()
	return g
}

// arm has collected run after the next collection.
func (g *gcFloor) arm() {
	runtime.AddCleanup(new(gcSentinel), (*gcFloor).collected, g)
}

// collected runs on the runtime's cleanup goroutine after a collection.
func (g *gcFloor) collected() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.adjustLocked()
	g.arm()
}

func (g *gcFloor) adjustLocked() {
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := gcPercentFor(g.sample[0].Value.Uint64(), g.floor); p != g.percent {
		debug.SetGCPercent(p)
		g.percent = p
	}
}

func (g *gcFloor) stop() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.stopped = true
		debug.SetGCPercent(100)
		g.percent = 100
	}
}

// current is the GOGC the floor last set (100 without one).
func (g *gcFloor) current() int {
	if g == nil {
		return 100
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.percent
}
