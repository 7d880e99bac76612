package forecast

import (
	"math"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// report is a fork save's report of cow copied out of used in secs at
// rate ops/s before it, of keys keys.
func report(used, cow int64, secs float64, rate float64, keys int64) *source.SaveReport {
	return &source.SaveReport{
		Kind: source.SaveFork, Status: "ok",
		BaseUsed: source.Some(used), COW: source.Some(cow),
		Observed:  time.Duration(secs * float64(time.Second)),
		OpsBefore: source.Some(rate), KeysTotal: source.Some(keys),
	}
}

func TestCalibrateThenPredictGivesTheSaveBack(t *testing.T) {
	const used = 400 << 20
	c, ok := Calibrate(report(used, 100<<20, 4, 5000, 1_000_000))
	if !ok || c.Saturated {
		t.Fatalf("%+v %v", c, ok)
	}
	pages := float64(used) / PageSize
	if want := -math.Log(0.75) * pages / (5000 * 4); math.Abs(c.K-want) > 1e-9 {
		t.Errorf("k %v, want %v", c.K, want)
	}
	if c.KeysPerSec != 250_000 {
		t.Errorf("keys/s %v", c.KeysPerSec)
	}
	// The same node, the same load: the same copy-on-write.
	now := Now{Used: source.Some[int64](used), RSS: source.Some[int64](used + 10<<20), Rate: source.Some(5000.0), Keys: source.Some[int64](1_000_000)}
	f, ok := Predict(now, &c)
	if !ok || f.Basis != Calibrated || f.Duration != 4*time.Second {
		t.Fatalf("%+v", f)
	}
	if d := f.COW - 100<<20; d < -1<<10 || d > 1<<10 {
		t.Errorf("COW %d, want %d", f.COW, 100<<20)
	}
	if f.Footprint != source.Some(used+10<<20+f.COW) {
		t.Errorf("footprint %+v", f.Footprint)
	}
	// Twice the keys take twice as long; twice the writes copy more,
	// never more than every page.
	now.Keys, now.Rate = source.Some[int64](2_000_000), source.Some(10000.0)
	g, _ := Predict(now, &c)
	if g.Duration != 8*time.Second || g.COW <= f.COW || g.COW > used {
		t.Errorf("twice keys and writes: %+v", g)
	}
	if !g.Bound.OK || g.Bound.V < g.COW {
		t.Errorf("bound %+v below the calibrated %d", g.Bound, g.COW)
	}
	// No key count: the last save's, scaled by used_memory.
	now.Keys = source.Opt[int64]{}
	if h, _ := Predict(now, &c); h.Duration != 4*time.Second {
		t.Errorf("keys scaled by used: %v (%s)", h.Duration, h.DurationFrom)
	}
}

func TestCalibrateSaturated(t *testing.T) {
	c, ok := Calibrate(report(100<<20, 100<<20, 2, 50000, 1000))
	if !ok || !c.Saturated || c.K <= 0 {
		t.Fatalf("%+v", c)
	}
	// A slower load still copies at least what the saturated save did:
	// its k is only a lower bound.
	f, _ := Predict(Now{Used: source.Some[int64](100 << 20), Rate: source.Some(1.0)}, &c)
	if f.COW < 100<<20 {
		t.Errorf("COW %d after a save that copied everything", f.COW)
	}
}

func TestCalibrateRefuses(t *testing.T) {
	for name, r := range map[string]*source.SaveReport{
		"nil":      nil,
		"aof":      {Kind: source.SaveAOF, Status: "ok", BaseUsed: source.Some[int64](1), COW: source.Some[int64](1)},
		"forkless": {Kind: source.SaveForkless, Status: "ok", BaseUsed: source.Some[int64](1), COW: source.Some[int64](1)},
		"err":      {Kind: source.SaveFork, Status: "err", BaseUsed: source.Some[int64](1), COW: source.Some[int64](1)},
		"no used":  {Kind: source.SaveFork, Status: "ok", COW: source.Some[int64](1)},
		"no cow":   {Kind: source.SaveFork, Status: "ok", BaseUsed: source.Some[int64](1)},
	} {
		if c, ok := Calibrate(r); ok {
			t.Errorf("%s: calibrated %+v", name, c)
		}
	}
	// No writes before: the speed, no k.
	r := report(1<<20, 1<<10, 1, 0, 1000)
	r.OpsBefore = source.Opt[float64]{}
	if c, ok := Calibrate(r); !ok || c.K != 0 || c.KeysPerSec != 1000 {
		t.Errorf("idle save: %+v %v", c, ok)
	}
}

func TestPredictWithoutCalibration(t *testing.T) {
	used := int64(64 << 20)
	if _, ok := Predict(Now{}, nil); ok {
		t.Error("a forecast without used_memory")
	}
	f, _ := Predict(Now{Used: source.Some(used)}, nil)
	if f.Basis != Worst || f.COW != used || f.Bound.OK {
		t.Errorf("no rate: %+v", f)
	}
	f, _ = Predict(Now{Used: source.Some(used), Rate: source.Some(1000.0)}, nil)
	if f.Basis != Bound || f.Duration != 2*time.Second || f.DurationFrom != "estimated: 32 MiB/s assumed" {
		t.Errorf("bound: %+v", f)
	}
	pages := float64(used) / PageSize
	if want := int64(pages * (1 - math.Exp(-PagesPerWrite*BoundMargin*1000*2/pages)) * PageSize); f.COW != want {
		t.Errorf("bound %d, want %d", f.COW, want)
	}
	f, _ = Predict(Now{Used: source.Some(used), Rate: source.Some(1000.0), LastSaveSeconds: source.Some[int64](0)}, nil)
	if f.Duration != time.Second || f.DurationFrom != "estimated: rdb_last_bgsave_time_sec" {
		t.Errorf("last save 0 s: %+v", f)
	}
	f, _ = Predict(Now{Used: source.Some(used), Rate: source.Some(1000.0), SaveDelay: source.Some[int64](100), Keys: source.Some[int64](100_000)}, nil)
	if f.Duration != 10*time.Second {
		t.Errorf("save delay: %+v", f)
	}
	f, _ = Predict(Now{Used: source.Some(used), RSS: source.Some(used), Forkless: true}, nil)
	if f.Basis != Forkless || f.COW != 0 || f.Footprint != source.Some(used) {
		t.Errorf("forkless: %+v", f)
	}
}

func TestMean(t *testing.T) {
	if _, ok := Mean(nil); ok {
		t.Error("mean of none")
	}
	m, _ := Mean([]Calibration{{K: 1, KeysPerSec: 100}, {K: 0, KeysPerSec: 300, Saturated: true}, {K: 2}})
	if m.K != 1.5 || m.KeysPerSec != 200 || !m.Saturated {
		t.Errorf("%+v", m)
	}
}

func TestCount(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := count(v); got != want {
			t.Errorf("count(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestPredictIdleBoundHoldsTheServersOwnCopies: after a save with no
// writes before it (which still copied the server's own pages), an idle
// node's bound is at least that save's COW, not 0 B below it; before any
// save, at least assumedOwnCOW; with writes
// the uniform bound still rules when it is larger.
func TestPredictIdleBoundHoldsTheServersOwnCopies(t *testing.T) {
	used := int64(64 << 20)
	rest := &Calibration{Used: used, COW: 1 << 20, Seconds: 2}
	f, _ := Predict(Now{Used: source.Some(used), Rate: source.Some(0.0)}, rest)
	if f.Basis != Bound || f.COW != 1<<20 || f.Bound != source.Some[int64](1<<20) {
		t.Errorf("idle after an idle save: %+v", f)
	}
	// No save seen: the assumed floor, never 0 B (the first save of the
	// demo's idle server copied about 1 MiB), and never above worst.
	if f, _ := Predict(Now{Used: source.Some(used), Rate: source.Some(0.0)}, nil); f.Basis != Bound || f.COW != assumedOwnCOW {
		t.Errorf("idle, no save seen: %+v", f)
	}
	if f, _ := Predict(Now{Used: source.Some[int64](1 << 20), Rate: source.Some(0.0)}, nil); f.COW != 1<<20 {
		t.Errorf("idle 1 MiB server, no save seen: %+v, want its worst case", f)
	}
	busy, _ := Predict(Now{Used: source.Some(used), Rate: source.Some(1000.0)}, rest)
	pages := float64(used) / PageSize
	if want := int64(pages * (1 - math.Exp(-PagesPerWrite*BoundMargin*1000*busy.Duration.Seconds()/pages)) * PageSize); busy.COW != max(want, 1<<20) || want < 1<<20 {
		t.Errorf("writes after an idle save: %+v, uniform %d", busy, want)
	}
}

// TestBoundCountsTheAllocatorsFreePages: the pages the allocator holds
// resident and unused are added to the bound, idle or busy, before a save
// or after one, and named; the calibrated forecast is not moved by them.
func TestBoundCountsTheAllocatorsFreePages(t *testing.T) {
	used, free := int64(256<<20), int64(10<<20)
	cal := &Calibration{K: 1, Used: used, COW: 8 << 20, Rate: 1000, Seconds: 2, Keys: 100_000, KeysPerSec: 50_000}
	for _, c := range []struct {
		name string
		rate float64
		cal  *Calibration
	}{{"idle, no save seen", 0, nil}, {"busy, no save seen", 2000, nil}, {"busy, calibrated", 2000, cal}} {
		now := Now{Used: source.Some(used), Rate: source.Some(c.rate)}
		without, _ := Predict(now, c.cal)
		now.AllocatorFree = source.Some(free)
		with, _ := Predict(now, c.cal)
		if with.Bound.V != without.Bound.V+free || with.AllocatorFree != source.Some(free) {
			t.Errorf("%s: bound %d with %d B free, %d without", c.name, with.Bound.V, free, without.Bound.V)
		}
		if c.cal != nil && with.COW != without.COW {
			t.Errorf("%s: the calibrated forecast moved from %d to %d", c.name, without.COW, with.COW)
		}
	}
	// Never above the worst case.
	small := Now{Used: source.Some[int64](4 << 20), Rate: source.Some(0.0), AllocatorFree: source.Some(free)}
	if f, _ := Predict(small, nil); f.Bound.V != 4<<20 {
		t.Errorf("4 MiB server with %d B free: bound %d, want its worst case", free, f.Bound.V)
	}
}

// TestBoundTakesThePeakRate: the upper bound counts the writes of the
// highest recent rate, the calibrated forecast those of the mean; a peak
// below the mean (or none) leaves the bound on the mean.
func TestBoundTakesThePeakRate(t *testing.T) {
	used := int64(256 << 20)
	pages := float64(used) / PageSize
	bound := func(rate float64) int64 {
		return int64(pages * (1 - math.Exp(-PagesPerWrite*BoundMargin*rate*8/pages)) * PageSize)
	}
	now := Now{Used: source.Some(used), Rate: source.Some(1000.0)} // 8 s at 32 MiB/s
	for _, c := range []struct {
		peak source.Opt[float64]
		want int64
	}{{source.Opt[float64]{}, bound(1000)}, {source.Some(500.0), bound(1000)}, {source.Some(3000.0), bound(3000)}} {
		now.Peak = c.peak
		f, _ := Predict(now, nil)
		if f.Bound.V != c.want || f.COW != c.want || f.Rate != now.Rate {
			t.Errorf("peak %+v: bound %d, cow %d, rate %+v; want %d on the rate %+v", c.peak, f.Bound.V, f.COW, f.Rate, c.want, now.Rate)
		}
	}
	cal := &Calibration{K: 1, KeysPerSec: 1000, Keys: 8000, Used: used, Rate: 1000, Seconds: 8}
	now.Keys, now.Peak = source.Some[int64](8000), source.Some(3000.0)
	f, _ := Predict(now, cal)
	if want := int64(float64(used) * (1 - math.Exp(-1000*8/pages))); f.Basis != Calibrated || f.COW != want || f.Bound.V != bound(3000) {
		t.Errorf("calibrated: %+v; want cow %d on the mean, bound %d on the peak", f, want, bound(3000))
	}
}

// TestNodeRateAndPeak: a node's rate is the mean of the samples of the
// last RateWindow taken while no save ran, its peak their highest.
func TestNodeRateAndPeak(t *testing.T) {
	var n Node
	if n.Rate().OK || n.Peak().OK {
		t.Fatal("a rate before any sample")
	}
	sample := func(off time.Duration, ops float64, saving bool) *source.Sample {
		s := &source.Sample{Offset: off, OpsPerSec: source.Some(ops)}
		s.Info.UsedMemory = source.Some[int64](64 << 20)
		if saving {
			s.Save = &source.SaveProgress{Started: time.Second}
		}
		return s
	}
	n.Observe(sample(0, 9000, false)) // leaves the window below
	for i, ops := range []float64{100, 400, 200} {
		n.Observe(sample(RateWindow+time.Duration(i)*time.Second, ops, false))
	}
	n.Observe(sample(RateWindow+3*time.Second, 50000, true)) // a save: not a write rate to forecast on
	if r, p := n.Rate(), n.Peak(); r != source.Some(700.0/3) || p != source.Some(400.0) {
		t.Errorf("rate %+v, peak %+v; want the mean 233.3 and the peak 400 of the three samples in the window", r, p)
	}
	if f, ok := n.Forecast(); !ok || f.Rate != n.Rate() {
		t.Errorf("forecast %+v, %v: want it on the mean rate", f, ok)
	}
}

// TestStuckNotInTheTail: a forkless save in its tail (every key written,
// the file being written) may show keys processed below the total for as
// long as the disk takes: the save thread stores the count at most once a
// second, and not after the last key. Not stuck; the same standstill
// while keys are written is.
func TestStuckNotInTheTail(t *testing.T) {
	for _, phase := range []string{source.PhaseFinishing, ""} {
		var n Node
		for i := range 40 {
			n.Observe(&source.Sample{Offset: time.Duration(i) * 200 * time.Millisecond, Save: &source.SaveProgress{
				Kind: source.SaveForkless, Started: 0, Phase: phase,
				Processed: source.Some[int64](24000), Total: source.Some[int64](40000),
			}})
		}
		if _, stuck := n.Stuck(); stuck != (phase == "") {
			t.Errorf("phase %q, 8 s at 24000/40000 keys: stuck %v", phase, stuck)
		}
	}
}

// TestForecastAfterForcedFork: bgsave-default-method forkless says no
// copy-on-write, until a save forks anyway (a module that cannot save
// forklessly): then the next is forecast as the fork it will be, and a
// forkless save after it puts the forkless forecast back.
func TestForecastAfterForcedFork(t *testing.T) {
	var n Node
	at := func(i int) *source.Sample {
		return &source.Sample{Offset: time.Duration(i) * time.Second, OpsPerSec: source.Some(100.0),
			Info:   source.Info{UsedMemory: source.Some[int64](1 << 30), RSS: source.Some[int64](1 << 30)},
			Config: source.SaveConfig{Method: "forkless"}}
	}
	n.Observe(at(0))
	if f, _ := n.Forecast(); f.Basis != Forkless {
		t.Fatalf("method forkless: basis %q", f.Basis)
	}
	forced := report(1<<30, 10<<20, 3, 100, 1000)
	forced.MethodNote = "forked, though bgsave-default-method is forkless"
	n.Learn(forced)
	n.Observe(at(1))
	if f, _ := n.Forecast(); f.Basis == Forkless || f.COW == 0 || !n.ForcedFork() {
		t.Errorf("after a forced fork: %+v", f)
	}
	n.Learn(&source.SaveReport{Kind: source.SaveForkless, Status: "ok"})
	n.Observe(at(2))
	if f, _ := n.Forecast(); f.Basis != Forkless {
		t.Errorf("after a forkless save: basis %q", f.Basis)
	}
}
