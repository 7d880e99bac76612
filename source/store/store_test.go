package store

import (
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
)

const (
	nodeA source.NodeID = "127.0.0.1:7001"
	nodeB source.NodeID = "127.0.0.1:7002"
	tick                = 200 * time.Millisecond
	mib                 = 1 << 20
)

var epoch = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// feeder makes the events of one node: samples every tick, saves that
// run over a range of offsets.
type feeder struct {
	id   source.NodeID
	seq  uint64
	save *source.SaveProgress
}

func (f *feeder) sample(off time.Duration) source.Event {
	f.seq++
	s := &source.Sample{Seq: f.seq, Offset: off, At: epoch.Add(off),
		Info:      source.Info{UsedMemory: source.Some[int64](100 * mib)},
		Footprint: source.Some[int64](110 * mib), COW: source.Some[int64](0)}
	if sv := f.save; sv != nil {
		el := off - sv.Started
		c := *sv
		c.Elapsed = el
		c.Processed, c.Total = source.Some(int64(el/tick)*1000), source.Some[int64](10000)
		s.Save = &c
		s.COW = source.Some(int64(el/tick) * mib)
		s.Footprint = source.Some(110*mib + s.COW.V)
	}
	return source.Event{Node: f.id, Kind: source.EventSample, Offset: off, At: s.At, Sample: s}
}

func (f *feeder) report(off time.Duration, curve []source.CurvePoint) source.Event {
	r := &source.SaveReport{Node: f.id, Addr: string(f.id), Kind: f.save.Kind, Trigger: f.save.Trigger, Status: "ok",
		Started: f.save.Started, Ended: off, StartedAt: epoch.Add(f.save.Started), Curve: curve}
	f.save = nil
	return source.Event{Node: f.id, Kind: source.EventSaveEnded, Offset: off, At: epoch.Add(off), Report: r}
}

// run adds samples from..to (exclusive) every tick, calling hook first.
func (f *feeder) run(s *Store, from, to time.Duration, hook func(off time.Duration)) {
	for off := from; off < to; off += tick {
		if hook != nil {
			hook(off)
		}
		ev := f.sample(off)
		s.Add(ev)
		if sv := ev.Sample.Save; sv != nil && sv.Started == off {
			ev.Kind = source.EventSaveStarted
			s.Add(ev) // the same sample again, as the watcher sends it
		}
	}
}

// runSave is run with a fork save that starts at start and, when end is
// not 0, ends (its report added) at end.
func (f *feeder) runSave(s *Store, from, to, start, end time.Duration) {
	f.run(s, from, to, func(off time.Duration) {
		switch {
		case off == start:
			f.save = &source.SaveProgress{Kind: source.SaveFork, Started: off}
		case end != 0 && off == end:
			s.Add(f.report(off, nil))
		}
	})
}

func TestPointsInOrderOncePerSeq(t *testing.T) {
	s := New(Config{})
	f := &feeder{id: nodeA}
	f.runSave(s, 0, 10*time.Second, 2*time.Second, 0)
	v := s.View(nodeA)
	if v.Points.Len() != 50 {
		t.Fatalf("%d points, want 50 (the save's first sample once)", v.Points.Len())
	}
	for i := 1; i < v.Points.Len(); i++ {
		if v.Points.Offsets[i] <= v.Points.Offsets[i-1] {
			t.Fatalf("point %d at %v not after %v", i, v.Points.Offsets[i], v.Points.Offsets[i-1])
		}
	}
	if v.Latest.Offset != v.Points.Offsets[v.Points.Len()-1] || v.State != Connected || s.Now() != 9800*time.Millisecond {
		t.Errorf("latest %v state %v now %v", v.Latest.Offset, v.State, s.Now())
	}
	if got := s.Nodes(); !reflect.DeepEqual(got, []source.NodeID{nodeA}) {
		t.Errorf("nodes %v", got)
	}
}

func TestRetentionByTime(t *testing.T) {
	s := New(Config{Keep: 10 * time.Second})
	f := &feeder{id: nodeA}
	s.Add(source.Event{Node: nodeA, Kind: source.EventDisconnected, Offset: time.Second, Err: "boom"})
	s.Add(source.Event{Node: nodeA, Kind: source.EventConnected, Offset: 2 * time.Second, Identity: &source.Identity{Addr: string(nodeA)}})
	f.runSave(s, 2*time.Second, 60*time.Second, 3*time.Second, 5*time.Second)
	v := s.View(nodeA)
	if first := v.Points.Offsets[0]; first < 49800*time.Millisecond-10*time.Second {
		t.Errorf("oldest point at %v, keep is 10s to %v", first, s.Now())
	}
	if v.Points.Len() != 51 {
		t.Errorf("%d points in 10 s of 200 ms", v.Points.Len())
	}
	if len(v.Spans) != 0 || len(v.Gaps) != 0 {
		t.Errorf("old spans %v / gaps %v kept", v.Spans, v.Gaps)
	}
	// Ended saves' curves are kept however old: the cost view compares them.
	if len(v.Curves) != 1 || v.Curves[0].Running {
		t.Errorf("curves %+v", v.Curves)
	}
	if len(s.Reports()) != 1 {
		t.Errorf("reports %d", len(s.Reports()))
	}
	// A wider window keeps more from now on.
	s.SetKeep(20 * time.Second)
	f.run(s, 60*time.Second, 80*time.Second, nil)
	if n := s.View(nodeA).Points.Len(); n != 101 {
		t.Errorf("%d points after SetKeep(20s)", n)
	}
}

func TestGapsAndConnection(t *testing.T) {
	s := New(Config{})
	if v := s.View(nodeA); v.State != Connecting || v.ID != nodeA {
		t.Fatalf("unknown node %+v", v)
	}
	id := &source.Identity{Addr: string(nodeA), Version: "7.0.15"}
	s.Add(source.Event{Node: nodeA, Kind: source.EventConnected, Offset: 0, Identity: id})
	s.Add(source.Event{Node: nodeA, Kind: source.EventDisconnected, Offset: 5 * time.Second, Err: "connection reset"})
	s.Add(source.Event{Node: nodeA, Kind: source.EventDisconnected, Offset: 6 * time.Second, Err: "connection refused"})
	v := s.View(nodeA)
	if v.State != Disconnected || v.Reason != "connection refused" || len(v.Gaps) != 1 || !v.Gaps[0].Open || v.Gaps[0].From != 5*time.Second {
		t.Fatalf("after disconnects: %+v", v)
	}
	s.Add(source.Event{Node: nodeA, Kind: source.EventConnected, Offset: 9 * time.Second, Identity: id})
	v2 := s.View(nodeA)
	if v2.State != Connected || v2.Reason != "" || v2.Gaps[0] != (Gap{From: 5 * time.Second, To: 9 * time.Second}) {
		t.Fatalf("after reconnect: %+v", v2)
	}
	// The view taken before still shows the open gap: views are not edited.
	if !v.Gaps[0].Open {
		t.Errorf("an earlier view's gap was edited in place")
	}
	if v2.Version == v.Version {
		t.Errorf("version did not change")
	}
	if s.Add(source.Event{Node: nodeA, Kind: source.EventSample}) {
		t.Errorf("a sample event without a sample changed the store")
	}
}

func TestSpansAndCurves(t *testing.T) {
	s := New(Config{Saves: 2})
	f := &feeder{id: nodeA}
	s.Add(source.Event{Node: nodeA, Kind: source.EventConnected, Identity: &source.Identity{Addr: string(nodeA)}})
	trig := source.Trigger{Kind: source.TriggerReplica, Detail: "replica 127.0.0.1:7009, disk"}
	var running View
	f.run(s, 0, 10*time.Second, func(off time.Duration) {
		switch off {
		case time.Second:
			f.save = &source.SaveProgress{Kind: source.SaveFork, Trigger: trig, Started: off}
		case 3 * time.Second:
			running = s.View(nodeA)
			s.Add(f.report(off, nil))
		}
	})
	c := running.Curves
	if len(c) != 1 || !c[0].Running || c[0].Kind != source.SaveFork || c[0].Trigger != trig || c[0].Addr != string(nodeA) {
		t.Fatalf("running curve %+v", c)
	}
	if c[0].BaseFootprint != source.Some[int64](110*mib) || !c[0].StartedAt.Equal(epoch.Add(time.Second)) {
		t.Errorf("base %v started %v", c[0].BaseFootprint, c[0].StartedAt)
	}
	// 10 samples from 1s to 2.8s; progress 0, 0.1, ... 0.9.
	if n := len(c[0].Points); n != 10 {
		t.Fatalf("%d curve points", n)
	}
	if p := c[0].Points[9]; p.Progress != 0.9 || p.COW != source.Some[int64](9*mib) || p.Elapsed != 1800*time.Millisecond {
		t.Errorf("last point %+v", p)
	}
	if sp := running.Spans; len(sp) != 1 || sp[0].Ended || sp[0].Start != time.Second || sp[0].End != 2800*time.Millisecond || sp[0].Trigger != trig {
		t.Errorf("running span %+v", sp)
	}
	v := s.View(nodeA)
	if len(v.Curves) != 1 || v.Curves[0].Running || v.Curves[0].Status != "ok" || len(v.Curves[0].Points) != 10 {
		t.Fatalf("ended curve %+v", v.Curves)
	}
	if sp := v.Spans; len(sp) != 1 || !sp[0].Ended || sp[0].End != 3*time.Second {
		t.Errorf("ended span %+v", sp)
	}
	if v.Report == nil || v.Report.Ended != 3*time.Second {
		t.Errorf("report %+v", v.Report)
	}

	// A report with its own curve replaces the one built from samples;
	// only the newest two ended curves stay (Saves: 2).
	own := []source.CurvePoint{{Progress: 0.5, COW: source.Some[int64](mib)}, {Progress: 1, COW: source.Some[int64](2 * mib)}}
	for i, start := range []time.Duration{20 * time.Second, 30 * time.Second} {
		f.run(s, start-time.Second, start+2*time.Second, func(off time.Duration) {
			if off == start {
				f.save = &source.SaveProgress{Kind: source.SaveForkless, Started: off}
			}
		})
		var curve []source.CurvePoint
		if i == 1 {
			curve = own
		}
		s.Add(f.report(start+2*time.Second, curve))
	}
	v = s.View(nodeA)
	if len(v.Curves) != 2 || v.Curves[0].Started != 20*time.Second || !reflect.DeepEqual(v.Curves[1].Points, own) {
		t.Errorf("curves after three saves: %+v", v.Curves)
	}
	// A save never sampled mid-way adds a span, but no curve.
	s.Add(source.Event{Node: nodeA, Kind: source.EventSaveEnded, Offset: 40 * time.Second,
		Report: &source.SaveReport{Node: nodeA, Kind: source.SaveAOF, Started: 39 * time.Second, Ended: 40 * time.Second}})
	v = s.View(nodeA)
	if sp := v.Spans[len(v.Spans)-1]; sp.Kind != source.SaveAOF || !sp.Ended || sp.Start != 39*time.Second {
		t.Errorf("unsampled save span %+v", sp)
	}
	if len(v.Curves) != 2 {
		t.Errorf("an unsampled save added a curve: %+v", v.Curves)
	}
}

func TestProgressAbsentAddsNoCurvePoint(t *testing.T) {
	// A server that reports no key counts: the save runs, but there is no
	// progress to plot against: no point is invented.
	s := New(Config{})
	for i, off := range []time.Duration{0, tick, 2 * tick} {
		s.Add(source.Event{Node: nodeA, Kind: source.EventSample, Offset: off, Sample: &source.Sample{
			Seq: uint64(i + 1), Offset: off, Save: &source.SaveProgress{Kind: source.SaveFork, Started: 0}}})
	}
	c := s.View(nodeA).Curves
	if len(c) != 1 || !c[0].Running || len(c[0].Points) != 0 || c[0].BaseFootprint.OK {
		t.Errorf("curve %+v", c)
	}
}

func TestAnotherJobEndsTheRunningCurve(t *testing.T) {
	s := New(Config{})
	f := &feeder{id: nodeA}
	f.run(s, 0, 2*time.Second, func(off time.Duration) {
		switch off {
		case 0:
			f.save = &source.SaveProgress{Kind: source.SaveFork, Started: 0}
		case time.Second:
			f.save = &source.SaveProgress{Kind: source.SaveAOF, Started: off}
		}
	})
	v := s.View(nodeA)
	if len(v.Curves) != 2 || v.Curves[0].Running || v.Curves[0].Kind != source.SaveFork || !v.Curves[1].Running || v.Curves[1].Kind != source.SaveAOF {
		t.Errorf("curves %+v", v.Curves)
	}
	if len(v.Spans) != 2 || !v.Spans[0].Ended || v.Spans[1].Ended {
		t.Errorf("spans %+v", v.Spans)
	}
}

// A replica's full sync right after a save: the next fork shows in the
// sample that ends the first, whose report comes after it. Each save keeps
// its own span and curve, known by its kind and start as the tracker
// reports them.
func TestASaveRightAfterOneOfItsKind(t *testing.T) {
	s := New(Config{})
	f := &feeder{id: nodeA}
	user := source.Trigger{Kind: source.TriggerUser}
	f.run(s, 0, 2*time.Second, func(off time.Duration) {
		if off == tick {
			f.save = &source.SaveProgress{Kind: source.SaveFork, Trigger: user, Started: off}
		}
	})
	first := f.report(2*time.Second, nil)
	f.save = &source.SaveProgress{Kind: source.SaveFork, Trigger: source.Trigger{Kind: source.TriggerReplica}, Started: 2 * time.Second}
	s.Add(f.sample(2 * time.Second))
	s.Add(first)
	f.run(s, 2*time.Second+tick, 3*time.Second, nil)
	s.Add(f.report(3*time.Second, nil))
	v := s.View(nodeA)
	want := []Span{
		{Kind: source.SaveFork, Trigger: user, Start: tick, End: 2 * time.Second, Ended: true},
		{Kind: source.SaveFork, Trigger: source.Trigger{Kind: source.TriggerReplica}, Start: 2 * time.Second, End: 3 * time.Second, Ended: true},
	}
	if !reflect.DeepEqual(v.Spans, want) {
		t.Errorf("spans\n%+v\nwant\n%+v", v.Spans, want)
	}
	if c := v.Curves; len(c) != 2 || c[0].Started != tick || c[0].Status != "ok" || len(c[0].Points) != 9 ||
		c[1].Started != 2*time.Second || c[1].Status != "ok" || len(c[1].Points) != 5 || c[1].Running {
		t.Errorf("curves %+v", c)
	}
}

// The server forks before it answers a BGSAVE: the tracker first calls
// the save another client's, then the user's once the answer comes. The
// running save's span and curve say what the tracker says now.
func TestTheTrackersLatestTrigger(t *testing.T) {
	s := New(Config{})
	f := &feeder{id: nodeA}
	other, user := source.Trigger{Kind: source.TriggerOther}, source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}
	f.run(s, 0, 2*time.Second, func(off time.Duration) {
		switch off {
		case tick:
			f.save = &source.SaveProgress{Kind: source.SaveFork, Trigger: other, Started: off}
		case 3 * tick:
			f.save.Trigger = user
		}
	})
	v := s.View(nodeA)
	if len(v.Spans) != 1 || v.Spans[0].Trigger != user || len(v.Curves) != 1 || v.Curves[0].Trigger != user {
		t.Errorf("spans %+v, curves %d (trigger %+v): want the user's", v.Spans, len(v.Curves), v.Curves)
	}
}

func TestFreeze(t *testing.T) {
	s := New(Config{Keep: 10 * time.Second})
	a, b := &feeder{id: nodeA}, &feeder{id: nodeB}
	a.run(s, 0, 5*time.Second, nil)
	b.run(s, 0, 5*time.Second, nil)
	s.Freeze()
	before, now, shown := s.View(nodeA), s.Now(), s.ShownReports()
	// Collection goes on, long past the retention window, with a save.
	a.runSave(s, 5*time.Second, 60*time.Second, 30*time.Second, 35*time.Second)
	s.Add(source.Event{Node: nodeB, Kind: source.EventDisconnected, Offset: 50 * time.Second, Err: "gone"})
	s.Add(source.Event{Node: "127.0.0.1:7003", Kind: source.EventConnected, Offset: 50 * time.Second})
	if got := s.View(nodeA); !reflect.DeepEqual(got, before) {
		t.Errorf("frozen view changed:\n%+v\nwant\n%+v", got, before)
	}
	if s.Now() != now || s.ShownReports() != shown || s.View(nodeB).State != Connected || s.View("127.0.0.1:7003").State != Connecting {
		t.Errorf("frozen now %v shown %d, B %v", s.Now(), s.ShownReports(), s.View(nodeB).State)
	}
	live := s.Live(nodeA)
	if live.Latest.Offset != 59800*time.Millisecond || len(s.Reports()) != 1 || len(live.Curves) != 1 {
		t.Errorf("live view while frozen: latest %v, %d reports", live.Latest.Offset, len(s.Reports()))
	}
	s.Thaw()
	v := s.View(nodeA)
	if v.Latest != live.Latest || s.Now() != 59800*time.Millisecond || s.ShownReports() != 1 || s.View(nodeB).State != Disconnected {
		t.Errorf("after thaw: latest %v now %v", v.Latest.Offset, s.Now())
	}
	if first := v.Points.Offsets[0]; first < 49800*time.Millisecond {
		t.Errorf("thaw did not apply retention: oldest %v", first)
	}
}

// The store keeps each node's forecast: the uniform bound before any
// save, the forecast made before a save on its report, a calibrated one
// after it.
func TestForecastAndReportSideBySide(t *testing.T) {
	s := New(Config{})
	f := &feeder{id: nodeA}
	if v := s.View(nodeA); v.Forecast.OK {
		t.Fatalf("a forecast before any sample: %+v", v.Forecast)
	}
	ops := func(off time.Duration) {} // the feeder's samples carry no ops/s
	f.run(s, 0, 2*time.Second, ops)
	v := s.View(nodeA)
	if !v.Forecast.OK || v.Forecast.V.Basis != forecast.Worst {
		t.Fatalf("no write rate: %+v", v.Forecast)
	}
	f.save = &source.SaveProgress{Kind: source.SaveFork, Started: 2 * time.Second}
	f.run(s, 2*time.Second, 4*time.Second, nil)
	ev := f.report(4*time.Second, nil)
	ev.Report.BaseUsed, ev.Report.COW = source.Some[int64](100*mib), source.Some[int64](30*mib)
	ev.Report.Observed, ev.Report.OpsBefore, ev.Report.KeysTotal = 2*time.Second, source.Some(1000.0), source.Some[int64](10000)
	s.Add(ev)
	rep := s.Reports()[0]
	if rep.ForecastCOW != source.Some[int64](100*mib) || rep.ForecastBasis != string(forecast.Worst) {
		t.Errorf("report's forecast %+v %q, want the worst case made before it", rep.ForecastCOW, rep.ForecastBasis)
	}
	if ev.Report.ForecastCOW.OK {
		t.Error("the watcher's report was changed")
	}
	if c := s.View(nodeA).Report; c.ForecastCOW != rep.ForecastCOW {
		t.Errorf("view's report %+v", c.ForecastCOW)
	}
}

// TestReset: a replay seeking back resets the store and feeds it again;
// the history is gone, Versions keep rising, and the reports of saves that
// ended before the cut stay.
func TestReset(t *testing.T) {
	s := New(Config{})
	f := &feeder{id: "a"}
	f.run(s, 0, 10*time.Second, nil)
	f.save = &source.SaveProgress{Kind: source.SaveFork, Started: 10 * time.Second}
	f.run(s, 10*time.Second, 12*time.Second, nil)
	s.Add(f.report(12*time.Second, nil))
	f.save = &source.SaveProgress{Kind: source.SaveFork, Started: 20 * time.Second}
	f.run(s, 20*time.Second, 22*time.Second, nil)
	s.Add(f.report(22*time.Second, nil))
	before := s.View("a").Version

	s.Reset(15 * time.Second)
	v := s.View("a")
	if v.Points.Len() != 0 || v.Latest != nil || len(v.Spans) != 0 || s.Now() != 0 {
		t.Fatalf("after Reset: %d points, latest %v, %d spans, now %s", v.Points.Len(), v.Latest, len(v.Spans), s.Now())
	}
	if v.Version <= before {
		t.Errorf("Version %d after Reset, was %d: a cached drawing would be taken for it", v.Version, before)
	}
	if r := s.Reports(); len(r) != 1 || r[0].Ended != 12*time.Second {
		t.Errorf("after Reset(15s): reports %v, want the one that ended at 12s", r)
	}
	f.run(s, 15*time.Second, 17*time.Second, nil)
	if v := s.View("a"); v.Points.Len() != 10 || v.Points.Offsets[0] != 15*time.Second {
		t.Errorf("fed again: %d points from %v", v.Points.Len(), v.Points.Offsets[0])
	}
}

// TestColumns: the store keeps each sample as its columns' numbers, and a
// figure the sample lacked as absent, not zero; a frozen view keeps the
// columns it had while samples go on arriving.
func TestColumns(t *testing.T) {
	cow := func(s *source.Sample) (float64, bool) { v, ok := s.COW.Get(); return float64(v), ok }
	rss := func(s *source.Sample) (float64, bool) { v, ok := s.Info.RSS.Get(); return float64(v), ok }
	s := New(Config{Columns: []Column{cow, rss}})
	f := &feeder{id: nodeA}
	f.runSave(s, 0, 2*time.Second, time.Second, 0)
	s.Freeze()
	f.run(s, 2*time.Second, 3*time.Second, nil)
	v := s.View(nodeA)
	if v.Points.Len() != 10 {
		t.Fatalf("frozen view holds %d points, want the 10 before the freeze", v.Points.Len())
	}
	for i := range v.Points.Len() {
		want := float64(0)
		if i >= 5 {
			want = float64(i-5) * mib
		}
		if got, ok := v.Points.Value(0, i); !ok || got != want {
			t.Errorf("point %d cow %v %v, want %v", i, got, ok, want)
		}
		if got, ok := v.Points.Value(1, i); ok {
			t.Errorf("point %d rss %v: the samples have none, it must be absent", i, got)
		}
	}
	if n := s.Live(nodeA).Points.Len(); n != 15 {
		t.Errorf("live view holds %d points while frozen, want 15", n)
	}
}

// TestSpikes: a node keeps its spikes within the retention window, at
// most MaxSpikes, and a view handed out keeps what it had.
func TestSpikes(t *testing.T) {
	s := New(Config{Keep: 10 * time.Second})
	f := &feeder{id: nodeA}
	spike := func(sent time.Duration) {
		s.Add(source.Event{Node: nodeA, Kind: source.EventSpike, Offset: sent + tick,
			Spike: &source.Spike{Ping: 50 * time.Millisecond, Sent: sent, Causes: []source.SpikeCause{{Kind: source.CauseFork}}}})
	}
	f.run(s, 0, time.Second, nil)
	spike(500 * time.Millisecond)
	if v := s.View(nodeA); len(v.Spikes) != 1 || v.Spikes[0].Sent != 500*time.Millisecond {
		t.Fatalf("spikes %+v", v.Spikes)
	}
	before := s.View(nodeA)
	f.run(s, time.Second, 20*time.Second, nil)
	if v := s.View(nodeA); len(v.Spikes) != 0 {
		t.Errorf("a spike older than the window kept: %+v", v.Spikes)
	}
	if len(before.Spikes) != 1 {
		t.Errorf("a view handed out lost its spike")
	}
	for i := range MaxSpikes + 10 {
		spike(20*time.Second + time.Duration(i)*time.Millisecond)
	}
	v := s.View(nodeA)
	if len(v.Spikes) != MaxSpikes || v.Spikes[0].Sent != 20*time.Second+10*time.Millisecond {
		t.Errorf("%d spikes from %v", len(v.Spikes), v.Spikes[0].Sent)
	}
	if s.Add(source.Event{Node: nodeA, Kind: source.EventSpike}) {
		t.Error("a spike event without its spike changed the store")
	}
}
