package saves

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// seq builds synthetic samples 200 ms apart from an idle Redis-like INFO.
type seq struct {
	clock time.Time
	off   time.Duration
	n     uint64
	info  source.Info
	cfg   source.SaveConfig // every sample's Config
	proc  source.ProcMem    // every sample's Proc
}

func newSeq() *seq {
	return &seq{
		clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		info: source.Info{
			ProcessID: source.Some[int64](100), Uptime: source.Some[int64](50),
			UsedMemory: source.Some[int64](1 << 30), RSS: source.Some[int64](1<<30 + 1<<20),
			TotalForks: source.Some[int64](0), RDBSaves: source.Some[int64](0),
			RDBInProgress: source.Some[int64](0), RDBCurrentTime: source.Some[int64](-1), RDBLastTime: source.Some[int64](-1),
			RDBLastStatus: "ok", RDBLastCOW: source.Some[int64](0),
			AOFRewriteInProgress: source.Some[int64](0), AOFLastRewriteTime: source.Some[int64](-1), AOFLastStatus: "ok",
			AOFLastCOW: source.Some[int64](0), CurrentCOW: source.Some[int64](0),
			KeysProcessed: source.Some[int64](0), KeysTotal: source.Some[int64](0),
		},
	}
}

// next returns the next sample, with f applied to the running INFO, and
// the instruments filled as the watcher fills them.
func (q *seq) next(f func(*source.Info), ops float64, ping source.Latency) *source.Sample {
	q.off += 200 * time.Millisecond
	if f != nil {
		f(&q.info)
	}
	s := &source.Sample{Seq: q.n, Offset: q.off, At: q.clock.Add(q.off), Info: q.info, Ping: ping,
		OpsPerSec: source.Some(ops), WriterOpsPerSec: source.Some(ops / 2), Config: q.cfg, Proc: q.proc}
	source.Derive(s)
	q.n++
	return s
}

func lat(min, p50, p99, max time.Duration, n int64) source.Latency {
	return source.Latency{Count: n, Min: min, P50: p50, P99: p99, Max: max}
}

func TestSaveTrackerForkSave(t *testing.T) {
	q := newSeq()
	tr := NewTracker("h:1", "h:1")
	calm := lat(40*time.Microsecond, 60*time.Microsecond, 90*time.Microsecond, 120*time.Microsecond, 100)
	// 10 s idle; ops ramp so that only the last 5 s count as "before".
	for i := range 50 {
		s := q.next(nil, float64(i), calm)
		if st, end := tr.Observe(s); st || end != nil || s.Save != nil {
			t.Fatalf("idle sample %d: started %v ended %+v save %+v", i, st, end, s.Save)
		}
	}
	base := q.info
	var starts int
	var peakCOW int64
	var curve []source.CurvePoint
	var attached []*source.SaveProgress // each running sample's progress
	for i := range 10 {
		s := q.next(func(in *source.Info) {
			in.RDBInProgress = source.Some[int64](1)
			in.RDBSaves = source.Some[int64](1)
			in.TotalForks = source.Some[int64](1)
			in.LatestForkUsec = source.Some[int64](1234)
			in.KeysTotal = source.Some[int64](5000)
			in.KeysProcessed = source.Some(int64(i * 500))
			in.CurrentCOW = source.Some(int64(i * 1000))
			in.UsedMemory = source.Some(base.UsedMemory.V + int64(i%4)*100)
			in.RSS = source.Some(base.RSS.V + int64(i)*4096)
		}, 1000, lat(50*time.Microsecond, 70*time.Microsecond, 2*time.Millisecond, time.Duration(i+2)*time.Millisecond, 90))
		peakCOW = max(peakCOW, q.info.CurrentCOW.V)
		// Remote: the server's own figures, RSS + current_cow_size.
		if s.COWFrom != source.FromInfo || s.COW != q.info.CurrentCOW || s.FootprintFrom != source.FromInfo || s.Footprint != source.Some(q.info.RSS.V+q.info.CurrentCOW.V) {
			t.Fatalf("instruments at %d: COW %+v from %q, footprint %+v from %q", i, s.COW, s.COWFrom, s.Footprint, s.FootprintFrom)
		}
		curve = append(curve, source.CurvePoint{Progress: float64(i) / 10, Elapsed: time.Duration(i) * 200 * time.Millisecond, COW: s.COW, Footprint: s.Footprint})
		st, end := tr.Observe(s)
		if st {
			starts++
		}
		if st != (i == 0) || end != nil {
			t.Fatalf("running sample %d: started %v ended %+v", i, st, end)
		}
		p := s.Save
		if p == nil || p.Kind != source.SaveFork || p.Started != 10200*time.Millisecond || p.Elapsed != time.Duration(i)*200*time.Millisecond ||
			p.Processed != q.info.KeysProcessed || p.Total != source.Some[int64](5000) || p.LiveCOW != q.info.CurrentCOW {
			t.Fatalf("progress at %d: %+v", i, p)
		}
		attached = append(attached, p)
	}
	endS := q.next(func(in *source.Info) {
		in.RDBInProgress = source.Some[int64](0)
		in.RDBLastTime = source.Some[int64](2)
		in.RDBLastCOW = source.Some[int64](777)
		in.CurrentCOW = source.Some[int64](0)
	}, 500, calm)
	st, rep := tr.Observe(endS)
	if st || rep == nil || endS.Save != nil {
		t.Fatalf("end sample: started %v report %+v save %+v", st, rep, endS.Save)
	}
	want := source.SaveReport{
		Node: "h:1", Addr: "h:1", Kind: source.SaveFork, Status: "ok",
		Evidence: "rdb_last_bgsave_status ok (nothing else to check it by: no rdb_last_save_time)",
		Started:  10200 * time.Millisecond, Ended: 12200 * time.Millisecond, StartedAt: q.clock.Add(10200 * time.Millisecond),
		Observed: 2 * time.Second, ServerSeconds: source.Some[int64](2), COW: source.Some[int64](777), COWFrom: source.FromRDBLastCOW, PeakLiveCOW: source.Some(peakCOW),
		// The last sample has the most COW, at 90 % of the keys; the
		// footprint peaks there too: RSS up 9 pages, COW 9000 bytes.
		PeakCOW: source.Some(peakCOW), PeakCOWFrom: source.FromInfo, PeakAtProgress: source.Some(0.9), PeakFootprintDelta: source.Some[int64](9*4096 + 9000),
		PeakFootprintFrom: source.FromInfo,
		KeysTotal:         source.Some[int64](5000),
		ForkPause:         source.Some(1234 * time.Microsecond), Curve: curve,
		BaseUsed: base.UsedMemory, BaseRSS: base.RSS, PeakUsedDelta: source.Some[int64](300), PeakRSSDelta: source.Some[int64](9 * 4096),
		// The last 5 s before the start: samples 24..49 (offsets 5 s..10 s
		// are within 5 s of the last one), ops 24..49.
		OpsBefore: source.Some(36.5), OpsDuring: source.Some(1000.0), WriterOpsBefore: source.Some(18.25), WriterOpsDuring: source.Some(500.0),
		PingBefore: lat(40*time.Microsecond, 60*time.Microsecond, 90*time.Microsecond, 120*time.Microsecond, 2600),
		PingDuring: lat(50*time.Microsecond, 70*time.Microsecond, 2*time.Millisecond, 11*time.Millisecond, 900),
	}
	if !reflect.DeepEqual(*rep, want) {
		t.Errorf("report\n got %+v\nwant %+v", *rep, want)
	}
	// Each running sample carries the curve up to and with it: the
	// tracker's own points (the report's, the one copy), clipped so that
	// what a sample carries stays as it was while the save goes on.
	for i, p := range attached {
		pts := p.Curve()
		if !reflect.DeepEqual(pts, curve[:i+1]) || cap(pts) != len(pts) {
			t.Errorf("sample %d carries curve %+v (cap %d), want the first %d points", i, pts, cap(pts), i+1)
		}
		if len(pts) > 0 && &pts[0] != &rep.Curve[0] && i == len(attached)-1 {
			t.Errorf("the last sample's curve is not the report's points")
		}
	}
	// The next sample must not see a second save.
	if st, end := tr.Observe(q.next(nil, 1, calm)); st || end != nil {
		t.Errorf("after the save: started %v ended %+v", st, end)
	}
}

func TestSaveTrackerForklessAndAOF(t *testing.T) {
	q := newSeq()
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	s := q.next(func(in *source.Info) {
		// A forkless BGSAVE counts in rdb_saves as it starts.
		in.RDBInProgress, in.RDBCurrentType, in.ForklessETA = source.Some[int64](1), "forkless", source.Some[int64](17)
		in.RDBSaves.V++
	}, 1, source.Latency{})
	if st, _ := tr.Observe(s); !st || s.Save.Kind != source.SaveForkless || s.Save.ETA != source.Some(17*time.Second) {
		t.Fatalf("forkless start: %+v", s.Save)
	}
	// The BGSAVE ends and a scheduled AOF rewrite starts before the next
	// sample: one report and one start.
	s = q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBCurrentType, in.RDBLastType, in.ForklessETA = source.Some[int64](0), "none", "forkless", source.Some[int64](-1)
		in.RDBLastTime, in.RDBLastCOW = source.Some[int64](3), source.Some[int64](0)
		in.AOFRewriteInProgress = source.Some[int64](1)
	}, 1, source.Latency{})
	st, rep := tr.Observe(s)
	if !st || rep == nil || rep.Kind != source.SaveForkless || rep.ServerSeconds != source.Some[int64](3) || s.Save == nil || s.Save.Kind != source.SaveAOF {
		t.Fatalf("kind change: started %v report %+v progress %+v", st, rep, s.Save)
	}
	s = q.next(func(in *source.Info) {
		in.AOFRewriteInProgress, in.AOFLastStatus, in.AOFLastRewriteTime, in.AOFLastCOW = source.Some[int64](0), "err", source.Some[int64](1), source.Some[int64](4096)
	}, 1, source.Latency{})
	_, rep = tr.Observe(s)
	if rep == nil || rep.Kind != source.SaveAOF || rep.Status != "err" || rep.ServerSeconds != source.Some[int64](1) || rep.COW != source.Some[int64](4096) {
		t.Errorf("AOF report %+v", rep)
	}
}

func TestSaveTrackerMissedSaves(t *testing.T) {
	tests := []struct {
		name   string
		f      func(*source.Info)
		want   source.SaveKind
		status string
		cow    source.Opt[int64] // rdb_last_cow_size is 99 after each
	}{
		{"rdb_saves", func(in *source.Info) { in.RDBSaves.V++; in.TotalForks.V++ }, source.SaveFork, "ok", source.Some[int64](99)},
		// Before 7.0 (no rdb_saves) a changed rdb_last_bgsave_time_sec
		// is the sign of a save.
		{"rdb_last_bgsave_time_sec", func(in *source.Info) { in.RDBLastTime, in.RDBSaves = source.Some[int64](0), source.Opt[int64]{} }, source.SaveFork, "ok", source.Some[int64](99)},
		// rdb_saves grew and nothing forked: forkless, whatever the last
		// type says (a cancel leaves it as it was). Its copy-on-write is
		// none, never rdb_last_cow_size (a fork save's).
		{"forkless", func(in *source.Info) { in.RDBSaves.V++; in.RDBLastType = "forkless" }, source.SaveForkless, "ok", source.Some[int64](0)},
		{"forkless, last type fork", func(in *source.Info) { in.RDBSaves.V++; in.RDBLastType = "fork" }, source.SaveForkless, "ok", source.Some[int64](0)},
		// rdb_last_bgsave_time_sec moved with neither rdb_saves nor a
		// fork: a replica's sync without a fork, no BGSAVE, no status.
		{"forkless sync", func(in *source.Info) { in.RDBLastTime = source.Some[int64](2) }, source.SaveForklessSync, "", source.Some[int64](0)},
		{"aof", func(in *source.Info) { in.AOFLastRewriteTime = source.Some[int64](0); in.TotalForks.V++ }, source.SaveAOF, "ok", source.Some[int64](0)},
		{"total_forks", func(in *source.Info) { in.TotalForks.V++ }, source.SaveFork, "ok", source.Some[int64](99)},
		{"nothing", func(in *source.Info) { in.UsedMemory.V++ }, "", "", source.Opt[int64]{}},
	}
	for _, tt := range tests {
		q := newSeq()
		tr := NewTracker("h", "h")
		tr.Observe(q.next(nil, 1, source.Latency{}))
		s := q.next(func(in *source.Info) { tt.f(in); in.RDBLastCOW = source.Some[int64](99) }, 1, source.Latency{})
		st, rep := tr.Observe(s)
		switch {
		case st:
			t.Errorf("%s: a save started", tt.name)
		case tt.want == "" && rep != nil:
			t.Errorf("%s: report %+v", tt.name, rep)
		// It ran between the two samples: at most their interval.
		case tt.want != "" && (rep == nil || rep.Kind != tt.want || rep.Observed != 200*time.Millisecond || !rep.ObservedUpTo ||
			rep.Started != s.Offset-200*time.Millisecond || rep.Ended != s.Offset || rep.Status != tt.status):
			t.Errorf("%s: report %+v, want kind %q status %q observed up to 200ms", tt.name, rep, tt.want, tt.status)
		case tt.want != "" && rep.COW != tt.cow:
			t.Errorf("%s: COW %+v, want %+v", tt.name, rep.COW, tt.cow)
		// No sample saw it: the server's figures are its peak and its
		// footprint's rise (the RSS did not move), named as theirs; the
		// end sample's interval is what it was seen to cost.
		case tt.want == source.SaveFork && (rep.PeakCOW != tt.cow || rep.PeakCOWFrom != source.FromRDBLastCOW ||
			rep.PeakFootprintDelta != tt.cow || rep.PeakFootprintFrom != "info rss + rdb_last_cow_size" || !rep.OpsDuring.OK || !rep.PeakUsedDelta.OK):
			t.Errorf("%s: peak %+v from %q, footprint +%+v from %q, ops during %+v, used +%+v", tt.name, rep.PeakCOW, rep.PeakCOWFrom,
				rep.PeakFootprintDelta, rep.PeakFootprintFrom, rep.OpsDuring, rep.PeakUsedDelta)
		}
	}
}

func TestSaveTrackerLateLastFields(t *testing.T) {
	// If the last-save fields showed up one sample after the end, they
	// must not count as a second, unobserved save.
	q := newSeq()
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress, in.RDBSaves = source.Some[int64](1), source.Some[int64](1) }, 1, source.Latency{}))
	if _, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress = source.Some[int64](0) }, 1, source.Latency{})); rep == nil {
		t.Fatal("no report at the end")
	}
	if _, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBLastTime = source.Some[int64](1) }, 1, source.Latency{})); rep != nil {
		t.Errorf("phantom report %+v", rep)
	}
}

func TestSaveTrackerServerRestart(t *testing.T) {
	q := newSeq()
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	tr.Observe(q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBSaves, in.TotalForks = source.Some[int64](1), source.Some[int64](4), source.Some[int64](4)
	}, 1, source.Latency{}))
	// A new process: counters start again, no save runs.
	s := q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBSaves, in.TotalForks, in.Uptime, in.ProcessID = source.Some[int64](0), source.Some[int64](0), source.Some[int64](0), source.Some[int64](1), source.Some[int64](200)
	}, 1, source.Latency{})
	st, rep := tr.Observe(s)
	if st || rep == nil || rep.Status != "lost (server restarted)" || rep.ServerSeconds.OK || rep.COW.OK {
		t.Errorf("restart during a save: started %v report %+v", st, rep)
	}
	// Counters growing again from zero are a real save on the new process.
	if _, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBSaves = source.Some[int64](1) }, 1, source.Latency{})); rep == nil {
		t.Error("a quick save after the restart went unreported")
	}
}

// TestSaveTrackerETASmooth feeds a save progressing at ~10k keys/s whose
// progress the server reports in ~1 s steps of uneven size (multiples of
// 1024 keys, reported a little late by varying amounts), sampled every
// 200 ms. The ETA must appear once there is a rate, track the truth and
// count down without jumping.
func TestSaveTrackerETASmooth(t *testing.T) {
	const total, rate = 200000, 10000.0
	q := newSeq()
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	start := q.off // the save began just before the next sample
	reported := int64(0)
	nextReport := start + time.Second
	var prevETA source.Opt[time.Duration]
	var prevOff time.Duration
	k := 0
	sawETA := false
	for {
		q.off += 0 // next() advances by 200 ms
		s := q.next(func(in *source.Info) {
			in.RDBInProgress, in.KeysTotal = source.Some[int64](1), source.Some[int64](total)
		}, 1, source.Latency{})
		now := s.Offset
		if now >= nextReport {
			// The child reports what it has done, rounded down to 1024.
			done := int64(rate * (nextReport - start).Seconds())
			if k == 0 {
				done = 1 // the first report of a fork child can be one key
			}
			reported = min(done/1024*1024, total)
			k++
			// Reports come 1.0 to 1.15 s apart.
			nextReport += time.Second + time.Duration((k*37)%16)*10*time.Millisecond
		}
		s.Info.KeysProcessed = source.Some(reported)
		q.info.KeysProcessed = s.Info.KeysProcessed
		tr.Observe(s)
		eta := s.Save.ETA
		truth := time.Duration((float64(total)/rate)*float64(time.Second)) - (now - start)
		if eta.OK {
			sawETA = true
			if now-start < 2*time.Second {
				t.Errorf("ETA %s at %s: before two progress steps there is no rate", eta.V, now-start)
			}
			// After a few steps it is within 15 % (+1 s) of the truth.
			if now-start > 5*time.Second {
				if d := (eta.V - truth).Seconds(); math.Abs(d) > 0.15*truth.Seconds()+1 {
					t.Errorf("at %s: ETA %s, truth %s", now-start, eta.V, truth)
				}
			}
			// From one sample to the next it counts down by about the time
			// passed: a step in progress moves it by less than a second.
			if prevETA.OK {
				elapsed := now - prevOff
				if jump := (prevETA.V - elapsed - eta.V).Seconds(); math.Abs(jump) > 1.0 && eta.V > 0 {
					t.Errorf("at %s: ETA jumped from %s to %s in %s", now-start, prevETA.V, eta.V, elapsed)
				}
			}
		} else if sawETA && reported < total {
			t.Errorf("at %s: ETA disappeared", now-start)
		}
		// At N/N the save writes its file: a phase, not an ETA of 0.
		if done := reported >= total; done != (s.Save.Phase == source.PhaseFinishing) || done && eta.OK {
			t.Errorf("at %s, %d/%d keys: ETA %+v, phase %q", now-start, reported, total, eta, s.Save.Phase)
		}
		prevETA, prevOff = eta, now
		if reported >= total || now-start > 30*time.Second {
			break
		}
	}
	if !sawETA {
		t.Error("no ETA during the whole save")
	}
}

func TestSaveTrackerDeterministic(t *testing.T) {
	run := func() []source.SaveReport {
		q := newSeq()
		tr := NewTracker("h", "h")
		var out []source.SaveReport
		for i := range 45 {
			s := q.next(func(in *source.Info) {
				in.RDBInProgress = source.Some(int64(i / 10 % 2))
				in.KeysProcessed, in.KeysTotal = source.Some(int64(i*1000)), source.Some[int64](50000)
				in.UsedMemory.V += int64(i)
			}, float64(i), lat(time.Duration(i+1)*time.Microsecond, 2*time.Millisecond, 3*time.Millisecond, 4*time.Millisecond, int64(i)))
			if _, rep := tr.Observe(s); rep != nil {
				out = append(out, *rep)
			}
		}
		return out
	}
	a, b := run(), run()
	if len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Errorf("two runs over the same samples differ or miss saves:\n%+v\n%+v", a, b)
	}
}

func TestMergeLatencies(t *testing.T) {
	ms := time.Millisecond
	same := lat(1*ms, 2*ms, 5*ms, 9*ms, 100)
	got := mergeLatencies([]source.Latency{same, same, same})
	if want := lat(1*ms, 2*ms, 5*ms, 9*ms, 300); got != want {
		t.Errorf("alike intervals: %+v, want %+v", got, want)
	}
	// One stalled interval among 20 (5 % of the PINGs): max exact, P50
	// a little above the calm P50, P99 between the calm and stalled P99s.
	ls := make([]source.Latency, 0, 21)
	for range 20 {
		ls = append(ls, same)
	}
	stall := lat(1*ms, 300*ms, 480*ms, 500*ms, 100)
	stall.InFlight = 20 * ms
	got = mergeLatencies(append(ls, stall))
	if got.Count != 2100 || got.Min != 1*ms || got.Max != 500*ms || got.P50 < 2*ms || got.P50 > 2500*time.Microsecond || got.InFlight != 20*ms {
		t.Errorf("with a stall: %+v", got)
	}
	if got.P99 < 5*ms || got.P99 > 480*ms {
		t.Errorf("with a stall: P99 %s outside its intervals' P99s", got.P99)
	}
	if got := mergeLatencies(nil); got != (source.Latency{}) {
		t.Errorf("nothing merged: %+v", got)
	}
	if got := mergeLatencies([]source.Latency{{}, same}); got.Count != 100 || got.Min != 1*ms {
		t.Errorf("an empty interval counts: %+v", got)
	}
}

// TestSaveTrackerCancel: the answers Valkey 8.1+ gives to BGSAVE CANCEL
// (src/rdb.c) decide how the save that ends is reported. A cancelled
// running save ends with the server's "err" in INFO, which vkwatch
// reports as cancelled; a cancelled scheduled save never ran; a refused
// or failed cancel changes nothing.
func TestSaveTrackerCancel(t *testing.T) {
	running := func(in *source.Info) { in.RDBInProgress, in.RDBSaves = source.Some[int64](1), source.Some[int64](1) }
	killed := func(in *source.Info) { in.RDBInProgress, in.RDBLastStatus = source.Some[int64](0), "err" }
	cases := []struct {
		name   string
		answer source.CommandResult
		want   string
	}{
		{"cancelled", source.CommandResult{Command: "BGSAVE CANCEL", Reply: "Background saving cancelled"}, source.StatusCancelled},
		{"lower case", source.CommandResult{Command: "bgsave cancel", Reply: "Background saving cancelled"}, source.StatusCancelled},
		{"scheduled only", source.CommandResult{Command: "BGSAVE CANCEL", Reply: "Scheduled background saving cancelled"}, "err"},
		{"nothing running", source.CommandResult{Command: "BGSAVE CANCEL", Err: "ERR Background saving is currently not in progress or scheduled"}, "err"},
		{"redis 7.0", source.CommandResult{Command: "BGSAVE CANCEL", Err: "ERR syntax error"}, "err"},
		{"another command", source.CommandResult{Command: "BGSAVE", Reply: "Background saving cancelled"}, "err"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newSeq()
			tr := NewTracker("h", "h")
			tr.Observe(q.next(nil, 1, source.Latency{}))
			tr.Observe(q.next(running, 1, source.Latency{}))
			tr.ObserveCommand(&c.answer)
			_, rep := tr.Observe(q.next(killed, 1, source.Latency{}))
			if rep == nil || rep.Status != c.want {
				t.Fatalf("report %+v, want status %q", rep, c.want)
			}
			// The next save is not cancelled by the old answer.
			tr.Observe(q.next(func(in *source.Info) {
				in.RDBInProgress, in.RDBSaves, in.RDBLastStatus = source.Some[int64](1), source.Some[int64](2), "ok"
			}, 1, source.Latency{}))
			if _, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress = source.Some[int64](0) }, 1, source.Latency{})); rep == nil || rep.Status != "ok" {
				t.Fatalf("next save: %+v", rep)
			}
		})
	}
	// A save cancelled between two samples (never seen running) is still
	// reported as cancelled.
	q := newSeq()
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	tr.ObserveCommand(&source.CommandResult{Command: "BGSAVE CANCEL", Reply: "Background saving cancelled"})
	if _, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBSaves, in.RDBLastStatus = source.Some[int64](1), "err" }, 1, source.Latency{})); rep == nil || rep.Status != source.StatusCancelled {
		t.Fatalf("unseen cancelled save: %+v", rep)
	}
}

// A save shorter than INFO's refresh of current_cow_size ends with the
// field still 0 while rdb_last_cow_size says pages were copied: the peak
// live figure is then absent, never a false 0. A save that copied
// nothing keeps its true 0.
func TestSaveTrackerLiveCOWNeverAFalseZero(t *testing.T) {
	for _, copied := range []int64{31_700_000, 0} {
		q := newSeq()
		tr := NewTracker("h:1", "h:1")
		calm := lat(40*time.Microsecond, 60*time.Microsecond, 90*time.Microsecond, 120*time.Microsecond, 100)
		tr.Observe(q.next(nil, 100, calm))
		for range 2 {
			tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress, in.RDBSaves = source.Some[int64](1), source.Some[int64](1) }, 100, calm))
		}
		_, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress, in.RDBLastCOW = source.Some[int64](0), source.Some(copied) }, 100, calm))
		if rep == nil {
			t.Fatal("no report")
		}
		want := source.Some[int64](0)
		if copied > 0 {
			want = source.Opt[int64]{}
		}
		if rep.PeakLiveCOW != want {
			t.Errorf("copied %d: peak live COW %+v, want %+v", copied, rep.PeakLiveCOW, want)
		}
	}
}

// TestShortSaveFigures: a save no instrument saw the cost of has the
// server's own figures. The one sample that saw it running found its
// child in /proc but exiting (its smaps_rollup gone): no copy-on-write, no
// footprint read. The child ended at 688 KiB (rdb_last_cow_size): its
// copy-on-write only grows, so its peak is that, at the end, named by the
// server's field, and the footprint rose by it and the RSS's rise. A save
// of vkwatch's own that ran between two samples began after its BGSAVE.
func TestShortSaveFigures(t *testing.T) {
	q := newSeq()
	q.proc = source.ProcMem{RSS: source.Some[int64](1 << 30), PSS: source.Some[int64](1 << 30)}
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	q.proc.ChildPID = source.Some[int64](4242)
	s := q.next(func(in *source.Info) {
		in.RDBInProgress = source.Some[int64](1)
		in.RDBSaves.V++
		in.TotalForks.V++
	}, 1, source.Latency{})
	if tr.Observe(s); s.COW.OK || s.Footprint.OK {
		t.Fatalf("an exiting child read: COW %+v, footprint %+v", s.COW, s.Footprint)
	}
	q.proc.ChildPID, q.proc.RSS = source.Opt[int64]{}, source.Some[int64](1<<30+4096)
	_, rep := tr.Observe(q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBLastCOW = source.Some[int64](0), source.Some[int64](688<<10)
	}, 1, source.Latency{}))
	if rep == nil || rep.PeakCOW != source.Some[int64](688<<10) || rep.PeakCOWFrom != source.FromRDBLastCOW || rep.PeakAtProgress != source.Some(1.0) ||
		rep.PeakFootprintDelta != source.Some[int64](688<<10+4096) || rep.PeakFootprintFrom != "proc rss + rdb_last_cow_size" || rep.ObservedUpTo {
		t.Errorf("report %+v", rep)
	}
	q.proc = source.ProcMem{}

	tr.ObserveCommand(&source.CommandResult{Command: "BGSAVE", Reply: "Background saving started", Sent: q.off + 150*time.Millisecond, Done: q.off + 160*time.Millisecond})
	s = q.next(func(in *source.Info) { in.RDBSaves.V++; in.TotalForks.V++ }, 1, source.Latency{})
	_, rep = tr.Observe(s)
	if rep == nil || rep.Trigger.Kind != source.TriggerUser || rep.Started != s.Offset-50*time.Millisecond || rep.Observed != 50*time.Millisecond || !rep.ObservedUpTo {
		t.Errorf("a save of vkwatch's between two samples: %+v", rep)
	}
}

// TestWorstSpike: a save's report names the spike of its worst PING,
// observed before the sample it follows, and no other: not one of
// another round trip, nor one sent before the save's first sample.
func TestWorstSpike(t *testing.T) {
	q := newSeq()
	tr := NewTracker("h:1", "h:1")
	calm := lat(40*time.Microsecond, 60*time.Microsecond, 90*time.Microsecond, 120*time.Microsecond, 100)
	for range 10 {
		tr.Observe(q.next(nil, 1000, calm))
	}
	before := q.off
	old := source.Spike{Ping: 68900 * time.Microsecond, Sent: before - 100*time.Millisecond}
	tr.ObserveSpike(&old) // the same round trip, before the save: not its
	running := func(in *source.Info) {
		in.RDBInProgress, in.RDBSaves, in.TotalForks = source.Some[int64](1), source.Some[int64](1), source.Some[int64](1)
	}
	forked := lat(40*time.Microsecond, 60*time.Microsecond, 90*time.Microsecond, 68900*time.Microsecond, 100)
	tr.Observe(q.next(running, 1000, forked))
	fork := source.Spike{Ping: 68900 * time.Microsecond, Sent: before + 50*time.Millisecond,
		Causes: []source.SpikeCause{{Kind: source.CauseFork, What: "fork pause", Covers: source.Some(33 * time.Millisecond), Evidence: "latest_fork_usec, total_forks +1"}}}
	other := source.Spike{Ping: 5 * time.Millisecond, Sent: before + 300*time.Millisecond}
	tr.ObserveSpike(&fork)
	tr.ObserveSpike(&other)
	tr.Observe(q.next(running, 1000, calm))
	_, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress = source.Some[int64](0) }, 1000, calm))
	if rep == nil || rep.WorstSpike == nil || rep.PingDuring.Max != fork.Ping {
		t.Fatalf("report %+v", rep)
	}
	if got := "worst ping " + source.Millis(rep.PingDuring.Max) + ": " + rep.WorstSpike.Summary(); got !=
		"worst ping 68.9 ms: fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1)" {
		t.Errorf("%q", got)
	}
	if rep.WorstSpike.Sent != fork.Sent {
		t.Errorf("the spike sent before the save: %+v", rep.WorstSpike)
	}

	// A save whose worst PING broke no rule names no spike.
	tr.Observe(q.next(running, 1000, calm))
	_, rep = tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress = source.Some[int64](0) }, 1000, calm))
	if rep == nil || rep.WorstSpike != nil {
		t.Errorf("report %+v", rep)
	}
	for range 2 * keepSpikes {
		tr.ObserveSpike(&other)
	}
	if len(tr.spikes) != keepSpikes {
		t.Errorf("kept %d spikes", len(tr.spikes))
	}
}
