package saves

import (
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// tellingSeq is a seq whose server reports everything the trigger needs:
// INFO replication (no replica), the save counters and clock, an AOF that
// is off, and the settings (no save rules, auto-aof-rewrite at 100 % over
// 64 MiB, diskless sync).
func tellingSeq() *seq {
	q := newSeq()
	q.info.ConnectedReplicas = source.Some[int64](0)
	q.info.RDBChangesSinceSave = source.Some[int64](0)
	q.info.RDBLastSaveTime = source.Some(q.clock.Unix())
	q.info.ServerTimeUsec = source.Some(q.clock.UnixMicro())
	q.info.AOFEnabled = source.Some[int64](0)
	q.cfg = source.SaveConfig{SaveSchedule: source.Some(""), ReplDisklessSync: source.Some(true),
		AutoAOFRewritePerc: source.Some[int64](100), AutoAOFRewriteMinSize: source.Some[int64](64 << 20)}
	return q
}

// tick advances the server's clock with the sample's.
func (q *seq) tick(f func(*source.Info)) *source.Sample {
	return q.next(func(in *source.Info) {
		in.ServerTimeUsec = source.Some(q.clock.Add(q.off).UnixMicro())
		if f != nil {
			f(in)
		}
	}, 1, source.Latency{})
}

func rdbRunning(in *source.Info) {
	in.RDBInProgress = source.Some[int64](1)
	in.RDBSaves.V++
	in.TotalForks.V++
}
func rdbEnded(in *source.Info) {
	in.RDBInProgress = source.Some[int64](0)
	in.RDBLastTime = source.Some[int64](1)
}
func aofRunning(in *source.Info) { in.AOFRewriteInProgress = source.Some[int64](1); in.TotalForks.V++ }
func aofEnded(in *source.Info) {
	in.AOFRewriteInProgress = source.Some[int64](0)
	in.AOFLastRewriteTime = source.Some[int64](1)
}

// once applies f to the first call only (a counter that grows at the fork).
func once(f func(*source.Info)) func(*source.Info) {
	done := false
	return func(in *source.Info) {
		if !done {
			f(in)
			done = true
		}
	}
}

func withReplica(state string) func(*source.Info) {
	return func(in *source.Info) {
		in.ConnectedReplicas = source.Some[int64](1)
		in.NumReplicas = 1
		in.Replicas[0] = source.Replica{IP: "10.0.0.7", Port: source.Some[int64](6380), State: state}
		in.ReplicasWaitingBGSave = 0
		if state == "wait_bgsave" {
			in.ReplicasWaitingBGSave = 1
		}
	}
}

func TestTriggers(t *testing.T) {
	bgsave := source.CommandResult{Command: "BGSAVE", Reply: "Background saving started"}
	late := source.CommandResult{Command: "BGSAVE", Reply: "Background saving started", Err: "late"}
	type step struct {
		f func(*source.Info)
		// cmd is handed to the tracker before the sample, as answered
		// since the last one; an Err "late" marks one sent before the
		// last sample and answered after it.
		cmd *source.CommandResult
	}
	cases := []struct {
		name  string
		setup func(q *seq)
		steps []step
		want  source.Trigger
	}{
		{"user: the answer before the save shows", nil,
			[]step{{rdbRunning, &bgsave}, {nil, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}},
		{"user: the answer one sample after the save shows", nil,
			[]step{{rdbRunning, nil}, {nil, &late}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}},
		{"user: a save too short to be seen running", nil,
			[]step{{func(in *source.Info) { in.RDBSaves.V++; in.TotalForks.V++ }, &bgsave}},
			source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}},
		{"user: BGREWRITEAOF scheduled behind a running BGSAVE", nil,
			[]step{{rdbRunning, nil},
				{func(in *source.Info) { in.AOFRewriteScheduled = source.Some[int64](1) },
					&source.CommandResult{Command: "BGREWRITEAOF", Reply: "Background append only file rewriting scheduled"}},
				{nil, nil},
				// The BGSAVE ends; serverCron starts the rewrite later.
				{func(in *source.Info) { rdbEnded(in) }, nil},
				{func(in *source.Info) { in.AOFRewriteScheduled = source.Some[int64](0); aofRunning(in) }, nil},
				{aofEnded, nil}},
			source.Trigger{Kind: source.TriggerUser, Detail: "BGREWRITEAOF"}},
		{"an old answer does not claim a later save", nil,
			// (a save that INFO never showed, or a server that lies)
			[]step{{nil, &bgsave}, {nil, nil}, {rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"a late answer does not claim a save seen before it was sent", nil,
			[]step{{rdbRunning, nil}, {nil, nil}, {nil, &bgsave}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"a BGREWRITEAOF answer does not claim an RDB save", nil,
			[]step{{rdbRunning, &source.CommandResult{Command: "BGREWRITEAOF", Reply: "Background append only file rewriting started"}},
				{rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"a refused BGSAVE claims nothing", nil,
			[]step{{rdbRunning, &source.CommandResult{Command: "BGSAVE", Err: "ERR Background save already in progress"}}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"replica waiting when the save shows (disk sync)", func(q *seq) { q.cfg.ReplDisklessSync = source.Some(false) },
			[]step{{func(in *source.Info) { rdbRunning(in); withReplica("wait_bgsave")(in) }, nil}, {withReplica("send_bulk"), nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerReplica, Detail: "replica 10.0.0.7:6380, disk"}},
		{"replica waiting through repl-diskless-sync-delay, then the fork", nil,
			[]step{{withReplica("wait_bgsave"), nil}, {rdbRunning, nil}, {withReplica("online"), nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerReplica, Detail: "replica 10.0.0.7:6380, diskless"}},
		{"replica receiving the file of a save too short to see", func(q *seq) { q.cfg.ReplDisklessSync = source.Some(false) },
			[]step{{func(in *source.Info) { in.RDBSaves.V++; in.TotalForks.V++; withReplica("send_bulk")(in) }, nil}},
			source.Trigger{Kind: source.TriggerReplica, Detail: "replica 10.0.0.7:6380, disk"}},
		{"a user's save wins over a replica waiting for the next one", nil,
			[]step{{func(in *source.Info) { rdbRunning(in); withReplica("wait_bgsave")(in) }, &bgsave}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}},
		{"an online replica is no evidence", nil,
			[]step{{withReplica("online"), nil}, {rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"save rule due", func(q *seq) { q.cfg.SaveSchedule = source.Some("3600 1 1 1") },
			// One write, then the server's clock passes a second since
			// the last save: `save 1 1` is due.
			[]step{{func(in *source.Info) { in.RDBChangesSinceSave = source.Some[int64](1) }, nil}, {nil, nil}, {nil, nil}, {nil, nil},
				{nil, nil}, {rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerSchedule, Detail: "save 1 1"}},
		{"save rule due, the write in the same interval as the fork", func(q *seq) { q.cfg.SaveSchedule = source.Some("1 1") },
			[]step{{nil, nil}, {nil, nil}, {nil, nil}, {nil, nil},
				{func(in *source.Info) { rdbRunning(in); in.RDBChangesSinceSave = source.Some[int64](1) }, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerSchedule, Detail: "save 1 1"}},
		{"save rule not due: too few changes", func(q *seq) { q.cfg.SaveSchedule = source.Some("1 100") },
			[]step{{func(in *source.Info) { in.RDBChangesSinceSave = source.Some[int64](99) }, nil}, {nil, nil}, {nil, nil}, {nil, nil},
				{nil, nil}, {nil, nil}, {rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"save rule not due: too soon", func(q *seq) { q.cfg.SaveSchedule = source.Some("60 1") },
			[]step{{func(in *source.Info) { in.RDBChangesSinceSave = source.Some[int64](5) }, nil}, {rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"save schedule unknown (CONFIG GET refused): cannot tell", func(q *seq) { q.cfg = source.SaveConfig{Err: "NOPERM"} },
			[]step{{rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{}},
		{"no INFO replication: cannot tell", func(q *seq) { q.info.ConnectedReplicas = source.Opt[int64]{} },
			[]step{{rdbRunning, nil}, {rdbEnded, nil}},
			source.Trigger{}},
		{"auto-aof-rewrite", func(q *seq) {
			q.info.AOFEnabled = source.Some[int64](1)
			q.info.AOFBaseSize = source.Some[int64](100 << 20)
		},
			[]step{{func(in *source.Info) { in.AOFCurrentSize = source.Some[int64](150 << 20) }, nil},
				{func(in *source.Info) { in.AOFCurrentSize = source.Some[int64](200 << 20) }, nil},
				{aofRunning, nil}, {aofEnded, nil}},
			source.Trigger{Kind: source.TriggerAOF, Detail: "auto-aof-rewrite-percentage 100: aof_current_size 209715200, aof_base_size 104857600"}},
		{"auto-aof-rewrite with no base yet (base 0 counts as 1)", func(q *seq) { q.info.AOFEnabled = source.Some[int64](1); q.info.AOFBaseSize = source.Some[int64](0) },
			[]step{{func(in *source.Info) { aofRunning(in); in.AOFCurrentSize = source.Some[int64](65 << 20) }, nil}, {aofEnded, nil}},
			source.Trigger{Kind: source.TriggerAOF, Detail: "auto-aof-rewrite-percentage 100: aof_current_size 68157440, aof_base_size 0"}},
		{"AOF below min-size: another client", func(q *seq) { q.info.AOFEnabled = source.Some[int64](1); q.info.AOFBaseSize = source.Some[int64](0) },
			[]step{{func(in *source.Info) { aofRunning(in); in.AOFCurrentSize = source.Some[int64](1 << 20) }, nil}, {aofEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
		{"appendonly turned on", nil,
			[]step{{func(in *source.Info) { in.AOFEnabled = source.Some[int64](1); aofRunning(in) }, nil}, {aofEnded, nil}},
			source.Trigger{Kind: source.TriggerAOF, Detail: "appendonly turned on"}},
		{"BGREWRITEAOF of another client with the AOF off", nil,
			[]step{{aofRunning, nil}, {aofEnded, nil}},
			source.Trigger{Kind: source.TriggerOther}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := tellingSeq()
			if tc.setup != nil {
				tc.setup(q)
			}
			tr := NewTracker("h", "h")
			tr.Observe(q.tick(nil))
			var reps []*source.SaveReport
			var progress []source.Trigger
			for _, st := range tc.steps {
				if st.cmd != nil {
					c := *st.cmd
					c.Sent, c.Done = q.off+time.Millisecond, q.off+2*time.Millisecond
					if c.Err == "late" {
						c.Err, c.Sent = "", q.off-100*time.Millisecond
					}
					tr.ObserveCommand(&c)
				}
				s := q.tick(st.f)
				if _, rep := tr.Observe(s); rep != nil {
					reps = append(reps, rep)
				}
				if s.Save != nil {
					progress = append(progress, s.Save.Trigger)
				}
			}
			// The save of interest is the last one.
			if len(reps) == 0 || reps[len(reps)-1].Trigger != tc.want {
				var got []source.Trigger
				for _, r := range reps {
					got = append(got, r.Trigger)
				}
				t.Fatalf("%d reports, triggers %+v, want the last %+v", len(reps), got, tc.want)
			}
			// From the sample after the answer on, the progress says it too.
			if n := len(progress); n > 1 && progress[n-1] != tc.want {
				t.Errorf("progress triggers %+v, want the last %+v", progress, tc.want)
			}
		})
	}
}

// TestBackToBackSaves: a replica's full sync starts the moment a user's
// save ends, between two samples. The counters show two saves.
func TestBackToBackSaves(t *testing.T) {
	q := tellingSeq()
	q.cfg.ReplDisklessSync = source.Some(false)
	tr := NewTracker("h", "h")
	tr.Observe(q.tick(nil))
	tr.ObserveCommand(&source.CommandResult{Command: "BGSAVE", Reply: "Background saving started", Sent: q.off + 1, Done: q.off + 2})
	if st, _ := tr.Observe(q.tick(rdbRunning)); !st {
		t.Fatal("no start")
	}
	tr.Observe(q.tick(withReplica("wait_bgsave")))
	st, rep := tr.Observe(q.tick(func(in *source.Info) { rdbRunning(in); in.RDBLastTime = source.Some[int64](1) }))
	if !st || rep == nil || rep.Trigger.Kind != source.TriggerUser {
		t.Fatalf("the user's save: started again %v, report %+v", st, rep)
	}
	_, rep = tr.Observe(q.tick(func(in *source.Info) { rdbEnded(in); withReplica("send_bulk")(in) }))
	if rep == nil || rep.Trigger != (source.Trigger{Kind: source.TriggerReplica, Detail: "replica 10.0.0.7:6380, disk"}) {
		t.Fatalf("the replica's save: %+v", rep)
	}
}

func TestForkPause(t *testing.T) {
	cases := []struct {
		name string
		a, b source.Info
		kind source.SaveKind
		want source.Opt[time.Duration]
	}{
		{"one fork", source.Info{TotalForks: source.Some[int64](3), LatestForkUsec: source.Some[int64](500)}, source.Info{TotalForks: source.Some[int64](4), LatestForkUsec: source.Some[int64](500)},
			source.SaveFork, source.Some(500 * time.Microsecond)},
		{"AOF rewrite forks too", source.Info{TotalForks: source.Some[int64](3)}, source.Info{TotalForks: source.Some[int64](4), LatestForkUsec: source.Some[int64](70)},
			source.SaveAOF, source.Some(70 * time.Microsecond)},
		{"two forks: which one?", source.Info{TotalForks: source.Some[int64](3)}, source.Info{TotalForks: source.Some[int64](5), LatestForkUsec: source.Some[int64](70)},
			source.SaveFork, source.Opt[time.Duration]{}},
		{"no fork counted: an older fork's", source.Info{TotalForks: source.Some[int64](3), LatestForkUsec: source.Some[int64](9)}, source.Info{TotalForks: source.Some[int64](3), LatestForkUsec: source.Some[int64](9)},
			source.SaveFork, source.Opt[time.Duration]{}},
		{"forkless", source.Info{TotalForks: source.Some[int64](3)}, source.Info{TotalForks: source.Some[int64](4), LatestForkUsec: source.Some[int64](70)},
			source.SaveForkless, source.Opt[time.Duration]{}},
		{"no total_forks, changed", source.Info{LatestForkUsec: source.Some[int64](9)}, source.Info{LatestForkUsec: source.Some[int64](10)},
			source.SaveFork, source.Some(10 * time.Microsecond)},
		{"no total_forks, unchanged", source.Info{LatestForkUsec: source.Some[int64](9)}, source.Info{LatestForkUsec: source.Some[int64](9)},
			source.SaveFork, source.Opt[time.Duration]{}},
		{"no latest_fork_usec", source.Info{TotalForks: source.Some[int64](3)}, source.Info{TotalForks: source.Some[int64](4)},
			source.SaveFork, source.Opt[time.Duration]{}},
	}
	for _, tc := range cases {
		if got := forkPause(tc.kind, &tc.a, &tc.b); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestSaveTrackerInstruments: a local fork save read through /proc. The
// peak COW is the child's largest Private_Dirty, at the progress of its
// sample; the footprint delta is over the RSS just before; the curve has a
// point per sample with a known progress.
func TestSaveTrackerInstruments(t *testing.T) {
	const mib = 1 << 20
	q := tellingSeq()
	q.proc = source.ProcMem{RSS: source.Some[int64](500 * mib), PSS: source.Some[int64](490 * mib)}
	tr := NewTracker("h", "h")
	s := q.tick(nil)
	tr.Observe(s)
	if s.COW != source.Some[int64](0) || s.COWFrom != source.FromProc || s.Footprint != source.Some[int64](500*mib) || s.FootprintFrom != source.FromProc {
		t.Fatalf("idle local server: COW %+v %q footprint %+v %q", s.COW, s.COWFrom, s.Footprint, s.FootprintFrom)
	}
	// The child's dirty memory: 0, then up; the server's progress is
	// unknown in the first sample, then 10 %, 40 %, 70 % (the COW peaks
	// there), 90 %; in the last sample the child is gone from /proc.
	dirty := []int64{0, 10 * mib, 60 * mib, 80 * mib, 75 * mib, -1}
	keys := []int64{-1, 100, 400, 700, 900, 1000}
	var curve []source.CurvePoint
	for i := range dirty {
		q.proc.ChildPID, q.proc.ChildPrivateDirty = source.Some[int64](77), source.Some(dirty[i])
		if dirty[i] < 0 {
			q.proc.ChildPID, q.proc.ChildPrivateDirty = source.Opt[int64]{}, source.Opt[int64]{}
		}
		q.proc.RSS = source.Some(int64(500+i) * mib)
		s := q.tick(func(in *source.Info) {
			if i == 0 {
				rdbRunning(in)
			}
			in.CurrentCOW = source.Some[int64](mib) // the server's own, slower figure
			in.KeysTotal, in.KeysProcessed = source.Some[int64](1000), source.Some(keys[i])
			if keys[i] < 0 {
				in.KeysTotal, in.KeysProcessed = source.Some[int64](0), source.Some[int64](0)
			}
		})
		tr.Observe(s)
		wantCOW, from := source.Some(dirty[i]), source.FromProc
		if dirty[i] < 0 {
			wantCOW, from = source.Some[int64](mib), source.FromInfo // the child is gone: INFO's
		}
		if s.COW != wantCOW || s.COWFrom != from {
			t.Fatalf("sample %d: COW %+v from %q, want %+v from %q", i, s.COW, s.COWFrom, wantCOW, from)
		}
		wantFoot := source.Some(int64(500+i)*mib + max(dirty[i], 0))
		if s.Footprint != wantFoot || s.FootprintFrom != source.FromProc {
			t.Fatalf("sample %d: footprint %+v from %q, want %+v from proc", i, s.Footprint, s.FootprintFrom, wantFoot)
		}
		if keys[i] >= 0 {
			curve = append(curve, source.CurvePoint{Progress: float64(keys[i]) / 1000, Elapsed: time.Duration(i) * 200 * time.Millisecond, COW: s.COW, Footprint: s.Footprint})
		}
	}
	q.proc.ChildPID, q.proc.ChildPrivateDirty = source.Opt[int64]{}, source.Opt[int64]{}
	_, rep := tr.Observe(q.tick(rdbEnded))
	if rep == nil {
		t.Fatal("no report")
	}
	if rep.PeakCOW != source.Some[int64](80*mib) || rep.PeakAtProgress != source.Some(0.7) {
		t.Errorf("peak COW %+v at %+v, want 80 MiB at 0.7", rep.PeakCOW, rep.PeakAtProgress)
	}
	// 503 MiB RSS + 80 MiB dirty over the 500 MiB before.
	if rep.PeakFootprintDelta != source.Some[int64](83*mib) {
		t.Errorf("peak footprint delta %+v, want 83 MiB", rep.PeakFootprintDelta)
	}
	if !reflect.DeepEqual(rep.Curve, curve) {
		t.Errorf("curve\n got %+v\nwant %+v", rep.Curve, curve)
	}
	if rep.PeakChildPrivateDirty != source.Some[int64](80*mib) || rep.PeakLiveCOW != source.Some[int64](mib) {
		t.Errorf("old figures: child dirty %+v, live COW %+v", rep.PeakChildPrivateDirty, rep.PeakLiveCOW)
	}
}

// TestPeakFootprintOneInstrument: a delta is only taken between figures
// of one instrument.
func TestPeakFootprintOneInstrument(t *testing.T) {
	q := tellingSeq()
	q.proc = source.ProcMem{RSS: source.Some[int64](100 << 20), PSS: source.Some[int64](90 << 20)}
	tr := NewTracker("h", "h")
	tr.Observe(q.tick(nil))
	// /proc stops answering (the process is another user's now, say):
	// INFO's estimate, a different instrument, is not compared with it.
	q.proc = source.ProcMem{}
	s := q.tick(func(in *source.Info) { rdbRunning(in); in.CurrentCOW = source.Some[int64](50 << 20) })
	tr.Observe(s)
	if s.FootprintFrom != source.FromInfo {
		t.Fatalf("footprint from %q", s.FootprintFrom)
	}
	_, rep := tr.Observe(q.tick(rdbEnded))
	if rep == nil || rep.PeakFootprintDelta.OK || rep.PeakCOW != source.Some[int64](50<<20) || rep.PeakAtProgress.OK {
		t.Fatalf("report %+v: want no footprint delta, peak COW 50 MiB at an unknown progress", rep)
	}
}

func TestDerive(t *testing.T) {
	some := source.Some[int64]
	none := source.Opt[int64]{}
	running := source.Info{RDBInProgress: some(1), RSS: some(1000), CurrentCOW: some(30)}
	idle := source.Info{RDBInProgress: some(0), RSS: some(1000), CurrentCOW: some(0)}
	cases := []struct {
		name     string
		in       source.Info
		p        source.ProcMem
		cow      source.Opt[int64]
		cowFrom  source.Instrument
		foot     source.Opt[int64]
		footFrom source.Instrument
	}{
		{"local fork save", running, source.ProcMem{RSS: some(900), PSS: some(800), ChildPID: some(2), ChildPrivateDirty: some(70)},
			some(70), source.FromProc, some(970), source.FromProc},
		{"local, the child not in /proc yet", running, source.ProcMem{RSS: some(900), PSS: some(800)},
			some(30), source.FromInfo, some(900), source.FromProc},
		{"local, the child's smaps_rollup unreadable", running, source.ProcMem{RSS: some(900), ChildPID: some(2)},
			some(30), source.FromInfo, some(1030), source.FromInfo},
		{"local, the child exiting (listed, its smaps_rollup gone)", running, source.ProcMem{RSS: some(900), PSS: some(800), ChildPID: some(2)},
			none, "", none, ""},
		{"local idle", idle, source.ProcMem{RSS: some(900), PSS: some(800)},
			some(0), source.FromProc, some(900), source.FromProc},
		{"local idle, smaps_rollup unreadable", idle, source.ProcMem{RSS: some(900)},
			some(0), source.FromInfo, some(900), source.FromProc},
		{"local forkless save: no child", source.Info{RDBInProgress: some(1), RDBCurrentType: "forkless", RSS: some(1000), CurrentCOW: some(0)},
			source.ProcMem{RSS: some(900), PSS: some(800)}, some(0), source.FromInfo, some(900), source.FromProc},
		{"remote fork save", running, source.ProcMem{}, some(30), source.FromInfo, some(1030), source.FromInfo},
		{"remote idle", idle, source.ProcMem{}, some(0), source.FromInfo, some(1000), source.FromInfo},
		{"remote AOF rewrite", source.Info{AOFRewriteInProgress: some(1), RSS: some(1000), CurrentCOW: some(5)}, source.ProcMem{},
			some(5), source.FromInfo, some(1005), source.FromInfo},
		{"old server without current_cow_size, idle", source.Info{RDBInProgress: some(0), RSS: some(1000)}, source.ProcMem{},
			none, "", some(1000), source.FromInfo},
		{"old server without current_cow_size, saving", source.Info{RDBInProgress: some(1), RSS: some(1000)}, source.ProcMem{},
			none, "", none, ""},
		{"nothing known", source.Info{}, source.ProcMem{}, none, "", none, ""},
	}
	for _, tc := range cases {
		s := source.Sample{Info: tc.in, Proc: tc.p, COW: some(-5), COWFrom: "stale", Footprint: some(-5), FootprintFrom: "stale"}
		source.Derive(&s)
		if s.COW != tc.cow || s.COWFrom != tc.cowFrom || s.Footprint != tc.foot || s.FootprintFrom != tc.footFrom {
			t.Errorf("%s: COW %+v %q footprint %+v %q, want %+v %q %+v %q", tc.name,
				s.COW, s.COWFrom, s.Footprint, s.FootprintFrom, tc.cow, tc.cowFrom, tc.foot, tc.footFrom)
		}
	}
	s := source.Sample{Info: running, Proc: source.ProcMem{RSS: some(900), PSS: some(800), ChildPID: some(2), ChildPrivateDirty: some(70)}}
	if n := testing.AllocsPerRun(100, func() { source.Derive(&s) }); n != 0 {
		t.Errorf("Derive allocates %.0f times", n)
	}
}
