package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{live: 1 * mib, floor: 8 * mib, want: 225}, // bounded by the runtime's least goal: 4 MiB x 2.25 = 9 MiB
		{live: 0, floor: 8 * mib, want: 200},       // nothing live yet: the least goal alone, 8 MiB
		{live: 6 * mib, floor: 8 * mib, want: 133}, // grow by the floor: 6 + 8 = 6 x 2.33
		{live: 8 * mib, floor: 8 * mib, want: 100}, // at the floor: the default
		{live: 40 * mib, floor: 8 * mib, want: 100},
	} {
		if got := gcPercentFor(c.live, c.floor); got != c.want {
			t.Errorf("gcPercentFor(%d MiB, %d MiB) = %d, want %d", c.live/mib, c.floor/mib, got, c.want)
		}
	}
	// The goal the runtime would set never falls below live+floor's
	// neighbourhood, nor the least goal above it.
	for live := uint64(0); live < 16*mib; live += mib / 4 {
		p := uint64(gcPercentFor(live, 8*mib))
		goal := max(live+live*p/100, heapMinimum*p/100)
		if live < 8*mib && (goal < 8*mib || goal > live+8*mib+mib/8) {
			t.Errorf("live %d KiB: GOGC %d gives a goal of %d KiB, want within [8 MiB, live+8 MiB]", live>>10, p, goal>>10)
		}
	}
}

// TestGCFloorFollowsCollections starts the floor in this process (whose
// live heap is far below 64 MiB), checks that GOGC is raised after a
// collection and given back by stop.
func TestGCFloorFollowsCollections(t *testing.T) {
	if v, ok := os.LookupEnv("GOGC"); ok {
		os.Unsetenv("GOGC")
		t.Cleanup(func() { os.Setenv("GOGC", v) })
	}
	g := startGCFloor(64 << 20)
	if g == nil {
		t.Fatal("startGCFloor returned nil without GOGC in the environment")
	}
	defer g.stop()
	first := g.current()
	if first <= 100 {
		t.Fatalf("GOGC %d at start with a small heap, want above 100", first)
	}
	// The cleanup runs after a collection: the floor re-arms each time.
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	deadline := time.Now().Add(10 * time.Second)
	for p := runtimeGOGC(t); p != g.current() || p <= 100; p = runtimeGOGC(t) {
		if time.Now().After(deadline) {
			t.Fatalf("runtime GOGC %d, floor says %d: want them equal and above 100", p, g.current())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	g.stop()
	if p := runtimeGOGC(t); p != 100 {
		t.Fatalf("GOGC %d after stop, want 100", p)
	}
	if g.current() != 100 {
		t.Fatalf("floor says %d after stop, want 100", g.current())
	}
	var nilFloor *gcFloor
	nilFloor.stop()
	if nilFloor.current() != 100 {
		t.Fatal("a nil floor should say 100")
	}
}

func TestGCFloorLeavesUsersGOGC(t *testing.T) {
	t.Setenv("GOGC", "150")
	if g := startGCFloor(gcFloorBytes); g != nil {
		g.stop()
		t.Fatal("startGCFloor took over a GOGC set in the environment")
	}
}

// runtimeGOGC is the runtime's GOGC, read without changing it.
func runtimeGOGC(t *testing.T) int {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatal("runtime/metrics has no /gc/gogc:percent")
	}
	return int(s[0].Value.Uint64())
}
