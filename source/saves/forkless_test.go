package saves

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// A server as Valkey 9.2 reports it after one fork save: the fork's
// copy-on-write is in rdb_last_cow_size, which a forkless save never
// touches. (The protocol as VALKEY.md reads it in the real source; the
// stand-in server's tests drive the same through a real watcher.)
func after92ForkSave(q *seq) {
	in := &q.info
	in.Version, in.ServerName = "9.2.0", "valkey"
	in.RDBSaves, in.TotalForks = source.Some[int64](1), source.Some[int64](1)
	in.RDBLastCOW = source.Some[int64](355 << 20)
	in.RDBLastType, in.RDBCurrentType = "fork", "none"
	in.RDBLastTime, in.RDBLastSaveTime = source.Some[int64](3), source.Some[int64](1_700_000_000)
	in.RDBChangesSinceSave = source.Some[int64](5000)
	in.ServerTimeUsec = source.Some[int64](1_700_000_100 * 1_000_000)
	in.ForklessETA = source.Some[int64](-1)
	in.BlockedClients = source.Some[int64](1) // one BLPOP, before and after
	q.cfg.Method = "forkless"
}

// forklessStart is the first sample of a forkless BGSAVE: rdb_saves
// counted as it starts, no key yet, the ETA -1.
func forklessStart(in *source.Info) {
	in.RDBInProgress, in.RDBCurrentType = source.Some[int64](1), "forkless"
	in.RDBSaves.V++
	in.KeysTotal, in.KeysProcessed = source.Some[int64](10000), source.Some[int64](0)
}

// TestForklessSaveOwnFigures: a forkless save after a fork save reports
// its own figures: no copy-on-write (no child), never the fork's
// rdb_last_cow_size; its phases (starting, an ETA, the tail) never an
// ETA below zero; the writers it blocked; and one report, however
// rdb_saves moved.
func TestForklessSaveOwnFigures(t *testing.T) {
	q := newSeq()
	after92ForkSave(q)
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	steps := []struct {
		f     func(*source.Info)
		eta   source.Opt[time.Duration]
		phase string
	}{
		{forklessStart, source.Opt[time.Duration]{}, source.PhaseStarting},
		{func(in *source.Info) {
			in.ForklessETA, in.BlockedClients = source.Some[int64](4), source.Some[int64](5)
		}, source.Some(4 * time.Second), ""},
		{func(in *source.Info) {
			in.KeysProcessed, in.ForklessETA, in.BlockedClients = source.Some[int64](4000), source.Some[int64](2), source.Some[int64](7)
			in.UsedMemory.V += 9 << 20
			in.RSS.V += 10 << 20
		}, source.Some(2 * time.Second), ""},
		// The last key written: the file is fsynced and renamed while
		// keys processed still shows the last stored count.
		{func(in *source.Info) {
			in.ForklessETA, in.BlockedClients = source.Some[int64](-1), source.Some[int64](1)
		}, source.Opt[time.Duration]{}, source.PhaseFinishing},
	}
	for i, st := range steps {
		s := q.next(st.f, 1, source.Latency{})
		started, ended := tr.Observe(s)
		if started != (i == 0) || ended != nil {
			t.Fatalf("step %d: started %v ended %+v", i, started, ended)
		}
		if p := s.Save; p == nil || p.Kind != source.SaveForkless || p.ETA != st.eta || p.Phase != st.phase {
			t.Fatalf("step %d: progress %+v, want ETA %+v phase %q", i, p, st.eta, st.phase)
		}
	}
	_, rep := tr.Observe(q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBCurrentType, in.RDBLastType = source.Some[int64](0), "none", "forkless"
		in.RDBLastTime, in.RDBLastSaveTime, in.RDBChangesSinceSave = source.Some[int64](6), source.Some[int64](1_700_000_106), source.Some[int64](40)
		in.KeysTotal, in.KeysProcessed = source.Some[int64](0), source.Some[int64](0)
	}, 1, source.Latency{}))
	if rep == nil {
		t.Fatal("no report")
	}
	if rep.Kind != source.SaveForkless || rep.Status != source.StatusOK || !strings.HasPrefix(rep.Evidence, "rdb_last_save_time advanced") {
		t.Errorf("kind %q status %q evidence %q", rep.Kind, rep.Status, rep.Evidence)
	}
	if rep.COW != source.Some[int64](0) || rep.COWFrom != source.FromNoChild {
		t.Errorf("COW %+v from %q: a forkless save has no child (rdb_last_cow_size is the fork's)", rep.COW, rep.COWFrom)
	}
	if rep.ServerSeconds != source.Some[int64](6) || rep.PeakUsedDelta != source.Some[int64](9<<20) || rep.PeakRSSDelta != source.Some[int64](10<<20) {
		t.Errorf("server seconds %+v, used +%+v, rss +%+v", rep.ServerSeconds, rep.PeakUsedDelta, rep.PeakRSSDelta)
	}
	if rep.BlockedBefore != source.Some[int64](1) || rep.BlockedDuring != source.Some[int64](7) || rep.BlockedAfter != source.Some[int64](1) {
		t.Errorf("blocked %+v → %+v → %+v", rep.BlockedBefore, rep.BlockedDuring, rep.BlockedAfter)
	}
	if rep.ForkPause.OK || rep.MethodNote != "" {
		t.Errorf("fork pause %+v, note %q", rep.ForkPause, rep.MethodNote)
	}
	for i := range 5 {
		if st, end := tr.Observe(q.next(nil, 1, source.Latency{})); st || end != nil {
			t.Errorf("idle sample %d after the save: started %v, report %+v", i, st, end)
		}
	}
}

// TestRDBSaveEnds: each way an RDB save ends, told apart by the fields
// each end sets (verdict.go), with the evidence named; and the last-save
// fields read only for the save that set them.
func TestRDBSaveEnds(t *testing.T) {
	ok := func(in *source.Info) {
		in.RDBLastSaveTime.V += 5
		in.RDBChangesSinceSave = source.Some[int64](3)
		in.RDBLastTime, in.RDBLastCOW = source.Some[int64](2), source.Some[int64](1<<20)
	}
	// FLUSHALL during the save: status, lastsave and the counter stay
	// (the counter grows by the keys flushed).
	flushed := func(in *source.Info) { in.RDBChangesSinceSave.V += 10000 }
	cases := []struct {
		name     string
		kind     source.SaveKind
		cancel   bool
		end      func(*source.Info)
		status   string
		evidence string
		cow      source.Opt[int64]
		secs     source.Opt[int64]
	}{
		{"fork ok", source.SaveFork, false, ok, source.StatusOK, "rdb_last_save_time advanced", source.Some[int64](1 << 20), source.Some[int64](2)},
		{"forkless ok", source.SaveForkless, false, ok, source.StatusOK, "rdb_last_save_time advanced", source.Some[int64](0), source.Some[int64](2)},
		// Done in the second the last save ended: the reset counter
		// says it saved.
		{"fork ok, same second", source.SaveFork, false, func(in *source.Info) {
			ok(in)
			in.RDBLastSaveTime.V -= 5
		}, source.StatusOK, "rdb_changes_since_last_save reset", source.Some[int64](1 << 20), source.Some[int64](2)},
		{"fork aborted", source.SaveFork, false, func(in *source.Info) {
			flushed(in)
			in.RDBLastTime = source.Some[int64](1) // Redis 7.0 sets it for the killed child
		}, source.StatusAborted, "rdb_last_save_time not advanced, rdb_changes_since_last_save not reset", source.Opt[int64]{}, source.Some[int64](1)},
		{"forkless aborted", source.SaveForkless, false, flushed, source.StatusAborted, "rdb_last_save_time not advanced", source.Some[int64](0), source.Opt[int64]{}},
		{"fork err", source.SaveFork, false, func(in *source.Info) {
			in.RDBLastStatus, in.RDBLastTime = "err", source.Some[int64](1)
		}, source.StatusErr, "rdb_last_bgsave_status err", source.Opt[int64]{}, source.Some[int64](1)},
		{"forkless cancelled", source.SaveForkless, true, func(in *source.Info) {
			in.RDBLastTime = source.Some[int64](1)
		}, source.StatusCancelled, "BGSAVE CANCEL answered", source.Some[int64](0), source.Some[int64](1)},
		{"fork cancelled", source.SaveFork, true, func(in *source.Info) {
			in.RDBLastTime = source.Some[int64](1)
		}, source.StatusCancelled, "BGSAVE CANCEL answered", source.Opt[int64]{}, source.Some[int64](1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newSeq()
			after92ForkSave(q)
			tr := NewTracker("h", "h")
			tr.Observe(q.next(nil, 1, source.Latency{}))
			run := forklessStart
			if c.kind == source.SaveFork {
				run = func(in *source.Info) {
					in.RDBInProgress, in.RDBCurrentType = source.Some[int64](1), "fork"
					in.RDBSaves.V++
					in.TotalForks.V++
				}
			}
			tr.Observe(q.next(run, 1, source.Latency{}))
			if c.cancel {
				tr.ObserveCommand(&source.CommandResult{Command: "BGSAVE CANCEL", Reply: "Background saving cancelled"})
				// Valkey 9.2 answers at once; the save goes on a moment.
				s := q.next(nil, 1, source.Latency{})
				if _, end := tr.Observe(s); end != nil || s.Save == nil || s.Save.Phase != source.PhaseCancelling || s.Save.ETA.OK {
					t.Fatalf("after the cancel's answer: report %+v, progress %+v", end, s.Save)
				}
			}
			_, rep := tr.Observe(q.next(func(in *source.Info) {
				in.RDBInProgress, in.RDBCurrentType = source.Some[int64](0), "none"
				c.end(in)
			}, 1, source.Latency{}))
			if rep == nil {
				t.Fatal("no report")
			}
			if rep.Kind != c.kind || rep.Status != c.status || !strings.HasPrefix(rep.Evidence, c.evidence) {
				t.Errorf("kind %q status %q evidence %q, want %q %q %q…", rep.Kind, rep.Status, rep.Evidence, c.kind, c.status, c.evidence)
			}
			if rep.COW != c.cow || rep.ServerSeconds != c.secs {
				t.Errorf("COW %+v (from %q) seconds %+v, want %+v, %+v", rep.COW, rep.COWFrom, rep.ServerSeconds, c.cow, c.secs)
			}
		})
	}
}

// TestRDBSaveEndUnchecked: where nothing can check the status (the save
// was running when vkwatch connected, so its start's second is not
// known), the server's status is taken and the evidence says why.
func TestRDBSaveEndUnchecked(t *testing.T) {
	q := newSeq()
	after92ForkSave(q)
	tr := NewTracker("h", "h")
	tr.Observe(q.next(forklessStart, 1, source.Latency{}))
	_, rep := tr.Observe(q.next(func(in *source.Info) { in.RDBInProgress, in.RDBLastTime = source.Some[int64](0), source.Some[int64](9) }, 1, source.Latency{}))
	if rep == nil || rep.Status != source.StatusOK || !strings.Contains(rep.Evidence, "no server_time_usec before the save began") || rep.COW != source.Some[int64](0) {
		t.Errorf("report %+v", rep)
	}
}

// TestForklessSync: a replica's full sync without a fork shows as
// rdb_bgsave_in_progress of type forkless, but rdb_saves does not count
// it: it is a sync, with keys processed and no total, no ETA, no status
// of its own; only rdb_last_bgsave_time_sec moves at its end.
func TestForklessSync(t *testing.T) {
	q := newSeq()
	after92ForkSave(q)
	q.info.ConnectedReplicas = source.Some[int64](1)
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	for i, n := range []int64{0, 3000, 9000} {
		s := q.next(func(in *source.Info) {
			in.RDBInProgress, in.RDBCurrentType = source.Some[int64](1), "forkless"
			in.KeysTotal, in.KeysProcessed = source.Some[int64](0), source.Some(n)
			in.NumReplicas, in.Replicas[0] = 1, source.Replica{IP: "127.0.0.1", Port: source.Some[int64](7001), State: "wait_bgsave"}
		}, 1, source.Latency{})
		st, end := tr.Observe(s)
		p := s.Save
		if st != (i == 0) || end != nil || p == nil || p.Kind != source.SaveForklessSync || p.Total.OK || p.Processed != source.Some(n) || p.ETA.OK || p.Phase != "" {
			t.Fatalf("sample %d: started %v ended %+v progress %+v", i, st, end, p)
		}
		if p.Trigger.Kind != source.TriggerReplica {
			t.Errorf("sample %d: trigger %+v", i, p.Trigger)
		}
	}
	_, rep := tr.Observe(q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBCurrentType, in.RDBLastTime = source.Some[int64](0), "none", source.Some[int64](7)
		in.KeysProcessed, in.Replicas[0].State = source.Some[int64](0), "online"
	}, 1, source.Latency{}))
	if rep == nil || rep.Kind != source.SaveForklessSync || rep.Status != "" || rep.COW != source.Some[int64](0) || rep.COWFrom != source.FromNoChild ||
		rep.ServerSeconds != source.Some[int64](7) || !strings.Contains(rep.Evidence, "no BGSAVE") || rep.KeysTotal.OK {
		t.Errorf("report %+v", rep)
	}
}

// TestForcedFork: under bgsave-default-method forkless a save the server
// forks anyway (a module it cannot iterate) is called out, and counted as
// a fork: rdb_current_bgsave_type is the truth, not the setting.
func TestForcedFork(t *testing.T) {
	q := newSeq()
	after92ForkSave(q)
	tr := NewTracker("h", "h")
	tr.Observe(q.next(nil, 1, source.Latency{}))
	s := q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBCurrentType = source.Some[int64](1), "fork"
		in.RDBSaves.V++
		in.TotalForks.V++
	}, 1, source.Latency{})
	tr.Observe(s)
	if s.Save == nil || s.Save.Kind != source.SaveFork || !source.ForcedFork(s) {
		t.Fatalf("progress %+v", s.Save)
	}
	_, rep := tr.Observe(q.next(func(in *source.Info) {
		in.RDBInProgress, in.RDBCurrentType = source.Some[int64](0), "none"
		in.RDBLastSaveTime.V++
		in.RDBLastCOW = source.Some[int64](12 << 20)
	}, 1, source.Latency{}))
	if rep == nil || rep.Kind != source.SaveFork || !strings.Contains(rep.MethodNote, "bgsave-default-method is forkless") || rep.COW != source.Some[int64](12<<20) {
		t.Errorf("report %+v", rep)
	}
}
