package forecast

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
	sourcewatch "github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// forklessReport is a finished forkless save of keys keys over secs
// seconds that blocked blocked writers at rate ops/s.
func forklessReport(keys int64, secs float64, blocked int64, rate float64) *source.SaveReport {
	return &source.SaveReport{Kind: source.SaveForkless, Status: source.StatusOK, KeysTotal: source.Some(keys),
		Observed: time.Duration(secs * float64(time.Second)), BaseUsed: source.Some[int64](1 << 30),
		BlockedBefore: source.Some[int64](1), BlockedDuring: source.Some(1 + blocked), OpsBefore: source.Some(rate),
		PeakUsedDelta: source.Some[int64](10 << 20)}
}

// TestLearnForkless: a forkless save gives its keys a second and the
// writers it blocked at the rate then; nothing else does.
func TestLearnForkless(t *testing.T) {
	f, ok := LearnForkless(forklessReport(3_000_000, 6, 3, 23000))
	if !ok || f.KeysPerSec != 500_000 || f.Blocked != source.Some[int64](3) || f.Rate != source.Some(23000.0) || f.MemRise != source.Some[int64](10<<20) {
		t.Errorf("learnt %+v", f)
	}
	for name, r := range map[string]*source.SaveReport{
		"fork":      {Kind: source.SaveFork, Status: source.StatusOK, KeysTotal: source.Some[int64](10), Observed: time.Second, BaseUsed: source.Some[int64](1)},
		"sync":      {Kind: source.SaveForklessSync, KeysTotal: source.Some[int64](10), Observed: time.Second, BaseUsed: source.Some[int64](1)},
		"cancelled": {Kind: source.SaveForkless, Status: source.StatusCancelled, KeysTotal: source.Some[int64](10), Observed: time.Second, BaseUsed: source.Some[int64](1)},
		"no keys":   {Kind: source.SaveForkless, Status: source.StatusOK, Observed: time.Second, BaseUsed: source.Some[int64](1)},
		"no time":   {Kind: source.SaveForkless, Status: source.StatusOK, KeysTotal: source.Some[int64](10), BaseUsed: source.Some[int64](1)},
	} {
		if _, ok := LearnForkless(r); ok {
			t.Errorf("%s: learnt from it", name)
		}
	}
}

// TestNodeForecastsBothMethods: a node forecasts a fork whatever its
// method, and a forkless save only once it has seen one: its keys a
// second on today's dataset (scaled by used_memory, which the monitor
// knows), and that save's blocked writers at its rate.
func TestNodeForecastsBothMethods(t *testing.T) {
	var n Node
	at := func(i int, used int64) *source.Sample {
		return &source.Sample{Offset: time.Duration(i) * time.Second, OpsPerSec: source.Some(20000.0),
			Info:   source.Info{UsedMemory: source.Some(used), RSS: source.Some(used)},
			Config: source.SaveConfig{Method: "forkless", ForklessInfra: source.Some(true)}}
	}
	n.Observe(at(0, 1<<30))
	if _, ok := n.ForklessForecast(); ok {
		t.Errorf("a forkless forecast before any forkless save")
	}
	if f, ok := n.ForkForecast(); !ok || f.Basis == Forkless || f.COW <= 0 {
		t.Errorf("fork side under a forkless method: %+v", f)
	}
	n.Learn(forklessReport(3_000_000, 6, 3, 23000))
	n.Observe(at(1, 2<<30)) // the dataset doubled
	f, ok := n.ForklessForecast()
	if !ok || f.Duration != 12*time.Second || !strings.Contains(f.DurationFrom, "500,000 keys/s, keys scaled by used_memory") ||
		f.Blocked != source.Some[int64](3) || f.BlockedAtRate != source.Some(23000.0) || f.RateNow != source.Some(20000.0) {
		t.Errorf("forkless side: %+v", f)
	}
	// bench knows the key count: no scaling.
	g, _ := PredictForkless(Now{Used: source.Some[int64](2 << 30), Keys: source.Some[int64](1_000_000)}, &f.From)
	if g.Duration != 2*time.Second || strings.Contains(g.DurationFrom, "scaled") {
		t.Errorf("with the key count: %+v", g)
	}
}

// TestForklessForecastOnStandIn: a forkless save on the 9.2 stand-in,
// watched, gives the node a forkless forecast whose figures are that
// save's report's: its keys over its length, its blocked writers.
func TestForklessForecastOnStandIn(t *testing.T) {
	const keys = 4000
	s := standin.Start(t, standin.Options{ForklessInfra: true, Method: "forkless"})
	s.Load("key:", keys, 600)
	w, _, _ := watchtest.Connect(t, context.Background(), s.Addr, sourcewatch.Config{Interval: 50 * time.Millisecond})
	events := watchtest.Run(t, w, 4096)
	var n Node
	var last *source.Sample
	feed := func(ev source.Event) bool {
		switch ev.Kind {
		case source.EventSample:
			n.Observe(ev.Sample)
			last = ev.Sample
		case source.EventSaveEnded:
			n.Learn(ev.Report)
			return true
		}
		return false
	}
	if _, ok := servertest.Receive(events, 10*time.Second, func(ev source.Event) bool { feed(ev); return ev.Kind == source.EventSample }); !ok {
		t.Fatal("no sample")
	}
	if _, ok := n.ForklessForecast(); ok {
		t.Fatal("a forkless forecast before the stand-in saved forklessly")
	}
	// Two writers of keys the save thread reaches last (600 B values: no
	// clone) wait for it, seen so by the watcher; then the save ends.
	c := s.Client(t)
	if r := w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	for _, k := range []string{"key:998", "key:999"} {
		go c.Set(context.Background(), k, "x", 0)
	}
	s.Wait(t, "two writers blocked", func(v standin.View) bool { return v.Blocked == 2 })
	s.WaitSampled(t, 2)
	s.Step(keys / 2)
	s.Advance(2 * time.Second)
	s.WaitSampled(t, 2)
	s.Step(keys)
	s.Advance(time.Second)
	s.Finish()
	ev, ok := servertest.Receive(events, 60*time.Second, feed)
	if !ok {
		t.Fatal("no report of the forkless save")
	}
	rep := ev.Report
	f, ok := n.ForklessForecast()
	if !ok || rep.Kind != source.SaveForkless {
		t.Fatalf("after %+v: no forkless forecast", rep)
	}
	// Its keys a second: keys total over the longer of the observed and
	// the server's seconds; today's keys, its own scaled by used_memory.
	secs := max(rep.Observed.Seconds(), float64(rep.ServerSeconds.V))
	keysNow := float64(rep.KeysTotal.V) * float64(last.Info.UsedMemory.V) / float64(rep.BaseUsed.V)
	kps := float64(rep.KeysTotal.V) / secs
	want := time.Duration(keysNow / kps * float64(time.Second))
	oneKey := time.Duration(float64(time.Second) / kps) // the forecast counts whole keys
	if f.From.Keys != keys || f.Blocked != rep.BlockedWriters() || f.Blocked.V != 2 || (f.Duration-want).Abs() > oneKey {
		t.Errorf("forecast %+v from report %+v (want duration %s)", f, rep, want)
	}
}
