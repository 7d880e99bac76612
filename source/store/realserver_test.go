package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// TestStoreHoldsARealSave feeds a store the events a real watcher emits
// while a real redis-server runs a BGSAVE, and checks what it holds
// against what the watcher sent and what the server reports.
func TestStoreHoldsARealSave(t *testing.T) {
	// 20,000 keys at 100 µs each: a save of about 2 s, sampled mid-way.
	s := watchtest.SlowSave(t, 20000, 100, 100, 90*time.Second, watch.Config{Interval: 100 * time.Millisecond})
	ctx, w, events := s.Ctx, s.Watcher, watchtest.Run(t, s.Watcher, 1024)

	footprint := func(s *source.Sample) (float64, bool) { v, ok := s.Footprint.Get(); return float64(v), ok }
	st := store.New(store.Config{Keep: time.Minute, Columns: []store.Column{footprint}})
	var emitted []source.Event
	// next adds events to the store until cond holds for one of them.
	next := func(what string, cond func(source.Event) bool) source.Event {
		t.Helper()
		for {
			select {
			case ev := <-events:
				st.Add(ev)
				emitted = append(emitted, ev)
				if cond(ev) {
					return ev
				}
			case <-ctx.Done():
				t.Fatalf("no %s", what)
			}
		}
	}
	next("first sample", func(ev source.Event) bool { return ev.Kind == source.EventSample })
	if res := w.Do(ctx, "BGSAVE"); !res.OK() {
		t.Fatalf("BGSAVE: %s", res.Err)
	}
	var mid *store.View
	var midTrigger source.Trigger
	var midSave *source.SaveProgress
	next("sample mid-save", func(ev source.Event) bool {
		if ev.Sample != nil && ev.Sample.Save != nil && ev.Sample.Save.Fraction().Or(0) > 0.2 {
			v := st.View(w.Node())
			mid, midTrigger, midSave = &v, ev.Sample.Save.Trigger, ev.Sample.Save
			return true
		}
		return false
	})
	end := next("end of the save", func(ev source.Event) bool { return ev.Kind == source.EventSaveEnded })
	next("a sample after the save", func(ev source.Event) bool { return ev.Kind == source.EventSample })

	rep := end.Report
	if rep.Kind != source.SaveFork || rep.Status != "ok" {
		t.Fatalf("report %s %s", rep.Kind, rep.Status)
	}
	v := st.View(w.Node())

	// Every sample the watcher emitted, once, in order.
	var samples []*source.Sample
	seen := map[uint64]bool{}
	for _, ev := range emitted {
		if ev.Sample != nil && !seen[ev.Sample.Seq] {
			seen[ev.Sample.Seq] = true
			samples = append(samples, ev.Sample)
		}
	}
	if v.Points.Len() != len(samples) {
		t.Fatalf("store holds %d samples, watcher emitted %d", v.Points.Len(), len(samples))
	}
	for i, smp := range samples {
		f, ok := v.Points.Value(0, i)
		if v.Points.Offsets[i] != smp.Offset || ok != smp.Footprint.OK || int64(f) != smp.Footprint.V {
			t.Fatalf("point %d at %v footprint %v %v is not the watcher's sample %d (%v %+v)", i, v.Points.Offsets[i], f, ok, i, smp.Offset, smp.Footprint)
		}
	}
	if v.State != store.Connected || v.Latest != samples[len(samples)-1] || v.Report == nil {
		t.Fatalf("state %v, latest %v, report %+v", v.State, v.Latest.Offset, v.Report)
	}
	// The store's report is the watcher's with the forecast made before
	// the save beside it.
	if r := *v.Report; !r.ForecastCOW.OK || r.ForecastBasis == "" {
		t.Errorf("report without its forecast: %+v %q", r.ForecastCOW, r.ForecastBasis)
	} else if r.ForecastCOW, r.ForecastBasis = rep.ForecastCOW, rep.ForecastBasis; !reflect.DeepEqual(r, *rep) {
		t.Errorf("store's report %+v, watcher's %+v", r, *rep)
	}
	if got := st.Reports(); len(got) != 1 || got[0].Started != rep.Started {
		t.Errorf("reports %+v", got)
	}

	// The save's span covers the report, and the mid-save view had it open.
	if len(v.Spans) != 1 || !v.Spans[0].Ended || v.Spans[0].Kind != source.SaveFork || v.Spans[0].Start != rep.Started || v.Spans[0].End != rep.Ended {
		t.Errorf("spans %+v, report %v..%v", v.Spans, rep.Started, rep.Ended)
	}
	if len(mid.Spans) != 1 || mid.Spans[0].Ended || len(mid.Curves) != 1 || !mid.Curves[0].Running {
		t.Fatalf("mid-save view: spans %+v curves %d", mid.Spans, len(mid.Curves))
	}
	// The running save is the user's as the tracker says it now, whether
	// the BGSAVE's answer came before the save's first sample or after.
	if midTrigger.Kind != source.TriggerUser || mid.Spans[0].Trigger != midTrigger || mid.Curves[0].Trigger != midTrigger {
		t.Errorf("mid-save trigger: tracker %+v, span %+v, curve %+v", midTrigger, mid.Spans[0].Trigger, mid.Curves[0].Trigger)
	}

	// The running curve mid-save was the start of the report's: the
	// same points, made once by saves.CurvePointOf.
	if len(mid.Curves) == 0 {
		t.Fatal("no running curve mid-save")
	}
	run := mid.Curves[0].Points
	if len(run) == 0 || len(run) > len(rep.Curve) || !reflect.DeepEqual(run, rep.Curve[:len(run)]) {
		t.Errorf("running curve mid-save %+v is not the start of the report's %+v", run, rep.Curve)
	}
	// And one copy of them: the store's running curve is the tracker's
	// own points, which the sample carried, not points made again.
	if tracked := midSave.Curve(); len(tracked) != len(run) || len(run) > 0 && &tracked[0] != &run[0] {
		t.Errorf("running curve mid-save (%d points) is not the tracker's (%d points): a second copy", len(run), len(tracked))
	}

	// One ended curve, its points the samples' progress, in order.
	if len(v.Curves) != 1 {
		t.Fatalf("%d curves", len(v.Curves))
	}
	c := v.Curves[0]
	if c.Running || c.Status != "ok" || c.Kind != source.SaveFork || c.Addr != w.Endpoint().String() || len(c.Points) < 2 {
		t.Fatalf("curve %+v", c)
	}
	progress := map[float64]bool{}
	for _, s := range samples {
		if s.Save != nil {
			if f, ok := s.Save.Fraction().Get(); ok {
				progress[f] = true
			}
		}
	}
	for i, p := range c.Points {
		if !progress[p.Progress] && len(rep.Curve) == 0 {
			t.Errorf("curve point %d at progress %v: no sample had it", i, p.Progress)
		}
		if i > 0 && p.Progress < c.Points[i-1].Progress {
			t.Errorf("curve goes back: %v after %v", p.Progress, c.Points[i-1].Progress)
		}
	}
	t.Logf("%d samples, save %s observed %s, curve of %d points up to %.0f%%", len(samples), rep.Kind, rep.Observed, len(c.Points), c.Points[len(c.Points)-1].Progress*100)
}

// TestStoreSpansAreTheTrackersSaves runs a BGSAVE and a BGREWRITEAOF the
// server schedules behind it, on a real server: the rewrite starts as the
// save ends, often between two samples, so one sample shows the next job
// before the first one's report comes. The store keeps one span and one
// curve per save the watcher's tracker reported, each where its report
// says (its kind, start and end), however the samples fell.
func TestStoreSpansAreTheTrackersSaves(t *testing.T) {
	// 10,000 keys at 100 µs each: about a second each, sampled mid-way.
	s := watchtest.SlowSave(t, 10000, 100, 100, 90*time.Second, watch.Config{Interval: 100 * time.Millisecond})
	ctx, w, events := s.Ctx, s.Watcher, watchtest.Run(t, s.Watcher, 1024)

	st := store.New(store.Config{Keep: time.Minute})
	var reports []*source.SaveReport
	sawSave := false
	for len(reports) < 2 {
		select {
		case ev := <-events:
			st.Add(ev)
			switch {
			case ev.Kind == source.EventSample && !sawSave:
				sawSave = true
				if res := w.Do(ctx, "BGSAVE"); !res.OK() {
					t.Fatalf("BGSAVE: %s", res.Err)
				}
				// Scheduled behind the BGSAVE, or started at once if a
				// stalled test process sent it after the BGSAVE's end: two
				// saves either way, and the same spans are due.
				if res := w.Do(ctx, "BGREWRITEAOF"); !res.OK() {
					t.Fatalf("BGREWRITEAOF: %s", res.Err)
				}
			case ev.Kind == source.EventSaveEnded:
				reports = append(reports, ev.Report)
			}
		case <-ctx.Done():
			t.Fatalf("%d of 2 saves reported", len(reports))
		}
	}
	v := st.View(w.Node())
	var want, got []store.Span
	for _, r := range reports {
		want = append(want, store.Span{Kind: r.Kind, Trigger: r.Trigger, Start: r.Started, End: r.Ended, Ended: true})
	}
	got = v.Spans
	if want[0].Kind != source.SaveFork || want[1].Kind != source.SaveAOF || !reflect.DeepEqual(got, want) {
		t.Fatalf("spans\n%+v\nwant the reports'\n%+v", got, want)
	}
	// A curve per save that knew its progress (the fork's does; an AOF
	// rewrite's needs current_save_keys_total), each its report's save.
	if len(v.Curves) == 0 || len(v.Curves) > 2 || v.Curves[0].Started != reports[0].Started {
		t.Fatalf("curves %+v for saves started at %v and %v", v.Curves, reports[0].Started, reports[1].Started)
	}
	for i, c := range v.Curves {
		if r := reports[i]; c.Running || c.Kind != r.Kind || c.Started != r.Started || c.Status != r.Status || len(c.Points) == 0 {
			t.Errorf("curve %d: %s from %v %q, %d points; report %s from %v %q", i, c.Kind, c.Started, c.Status, len(c.Points), r.Kind, r.Started, r.Status)
		}
	}
}
