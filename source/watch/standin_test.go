package watch

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/standin"
)

// standInWatch starts a stand-in holding keys keys of size bytes and a
// watch of it, connected, with a client of the test's own.
func standInWatch(t *testing.T, opts standin.Options, keys, size int) (*standin.Server, *watch, *redis.Client) {
	t.Helper()
	s := standin.Start(t, opts)
	s.Load("key:", keys, size)
	x := startWatch(t, s.Addr, Config{})
	x.next(t, 10*time.Second, "connected to the stand-in", kind(source.EventConnected))
	return s, x, s.Client(t)
}

// sampleOfSave waits for a sample of the running save for which cond
// holds.
func (x *watch) sampleOfSave(t *testing.T, what string, cond func(*source.Sample) bool) *source.Sample {
	t.Helper()
	return x.next(t, 20*time.Second, what, sampleWhere(func(s *source.Sample) bool { return s.Save != nil && cond(s) })).Sample
}

// forkSaveOnStandIn runs a fork save on the stand-in that copies pages,
// to the end, and a second of the stand-in's time after it; it returns
// its report.
func forkSaveOnStandIn(t *testing.T, s *standin.Server, x *watch, c *redis.Client) *source.SaveReport {
	t.Helper()
	ctx := context.Background()
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.sampleOfSave(t, "the fork save running", func(s *source.Sample) bool { return s.Save.Kind == source.SaveFork })
	for i := range 50 {
		if err := c.Set(ctx, "key:"+string(rune('0'+i%10)), strings.Repeat("w", 600), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.Step(s.View().Keys)
	s.Advance(1500 * time.Millisecond)
	s.Finish()
	rep := x.nextReport(t, 20*time.Second)
	s.Advance(time.Second)
	s.WaitSampled(t, 1)
	return rep
}

// TestStandInForklessAfterForkSave: the case. After a fork save
// (rdb_last_cow_size its copy-on-write), a forkless save reports no
// copy-on-write of its own (no child), its memory as the server's own
// rise, the writers it blocked, each phase without an ETA below zero, and
// ok on the evidence of rdb_last_save_time.
func TestStandInForklessAfterForkSave(t *testing.T) {
	ctx := context.Background()
	s, x, c := standInWatch(t, standin.Options{ForklessInfra: true}, 4000, 600)
	fork := forkSaveOnStandIn(t, s, x, c)
	if fork.Status != source.StatusOK || fork.COWFrom != source.FromRDBLastCOW || fork.COW.V < 50*4096 || !fork.ForkPause.OK {
		t.Fatalf("fork save on the stand-in: %+v", fork)
	}
	if err := c.ConfigSet(ctx, "bgsave-default-method", "forkless").Err(); err != nil {
		t.Fatal(err)
	}
	x.next(t, 10*time.Second, "the method in the settings", sampleWhere(func(s *source.Sample) bool { return s.Config.Method == "forkless" }))
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.sampleOfSave(t, "the forkless save before its first key", func(s *source.Sample) bool {
		return s.Save.Kind == source.SaveForkless && s.Save.Phase == source.PhaseStarting && !s.Save.ETA.OK
	})
	// Two writers of keys the save thread holds (600-byte values: no
	// clone) wait for it.
	writes := make(chan error, 2)
	for _, k := range []string{"key:3000", "key:3999"} {
		go func() { writes <- c.Set(ctx, k, "new", 0).Err() }()
	}
	s.Wait(t, "two blocked writers", func(v standin.View) bool { return v.Blocked == 2 })
	s.Step(1000)
	s.Advance(time.Second)
	smp := x.sampleOfSave(t, "the forkless save with an ETA and blocked writers", func(s *source.Sample) bool {
		return s.Save.ETA.OK && s.Info.BlockedClients == source.Some[int64](2)
	})
	if smp.Save.Phase != "" || smp.Save.ETA.V != 3*time.Second || smp.COW != source.Some[int64](0) {
		t.Errorf("writing: ETA %+v phase %q COW %+v", smp.Save.ETA, smp.Save.Phase, smp.COW)
	}
	s.Step(3000) // the last key: both writers go on
	for range 2 {
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
	}
	x.sampleOfSave(t, "the tail", func(s *source.Sample) bool { return s.Save.Phase == source.PhaseFinishing && !s.Save.ETA.OK })
	s.Advance(2 * time.Second)
	s.Finish()
	rep := x.nextReport(t, 20*time.Second)
	if rep.Kind != source.SaveForkless || rep.Status != source.StatusOK || !strings.HasPrefix(rep.Evidence, "rdb_last_save_time advanced") {
		t.Errorf("kind %q status %q evidence %q", rep.Kind, rep.Status, rep.Evidence)
	}
	if rep.COW != source.Some[int64](0) || rep.COWFrom != source.FromNoChild || rep.PeakCOW != source.Some[int64](0) {
		t.Errorf("COW %+v from %q, peak %+v: the fork save's was %+v", rep.COW, rep.COWFrom, rep.PeakCOW, fork.COW)
	}
	if rep.ServerSeconds != source.Some[int64](3) || rep.ForkPause.OK || !rep.PeakUsedDelta.OK || rep.BlockedDuring != source.Some[int64](2) || rep.BlockedAfter != source.Some[int64](0) {
		t.Errorf("seconds %+v pause %+v used +%+v blocked %+v/%+v", rep.ServerSeconds, rep.ForkPause, rep.PeakUsedDelta, rep.BlockedDuring, rep.BlockedAfter)
	}
	if u := s.Unknown(); len(u) > 0 {
		t.Errorf("the watcher sent commands the stand-in does not know: %q", u)
	}
}

// TestStandInCancelledAndAborted: a BGSAVE CANCEL answered at once while
// the forkless thread stops later shows as cancelling, then as a
// cancelled save; a FLUSHALL during the next one, as an aborted save; a
// fork on a server set to forkless is called out.
func TestStandInCancelledAndAborted(t *testing.T) {
	ctx := context.Background()
	s, x, c := standInWatch(t, standin.Options{ForklessInfra: true, Method: "forkless"}, 2000, 100)
	s.Advance(2 * time.Second) // a later second than the start's lastsave
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.sampleOfSave(t, "the forkless save", func(*source.Sample) bool { return true })
	if r := x.w.Do(ctx, "BGSAVE", "CANCEL"); r.Reply != "Background saving cancelled" {
		t.Fatalf("BGSAVE CANCEL: %+v", r)
	}
	x.sampleOfSave(t, "the save stopping after the cancel's answer", func(s *source.Sample) bool { return s.Save.Phase == source.PhaseCancelling })
	s.Advance(time.Second)
	s.SettleCancel()
	rep := x.nextReport(t, 20*time.Second)
	if rep.Status != source.StatusCancelled || !strings.Contains(rep.Evidence, "BGSAVE CANCEL") || rep.COW != source.Some[int64](0) || rep.ServerSeconds != source.Some[int64](1) {
		t.Errorf("cancelled: %+v", rep)
	}

	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.sampleOfSave(t, "the second forkless save", func(*source.Sample) bool { return true })
	s.Step(500)
	s.Advance(time.Second)
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rep = x.nextReport(t, 20*time.Second)
	if rep.Status != source.StatusAborted || !strings.HasPrefix(rep.Evidence, "rdb_last_save_time not advanced") || rep.ServerSeconds.OK || rep.COW != source.Some[int64](0) {
		t.Errorf("aborted: %+v", rep)
	}
}

// TestStandInForcedFork: with a module that cannot save forklessly the
// server forks though the method says forkless: the report is a fork
// save's, with the call-out.
func TestStandInForcedFork(t *testing.T) {
	s, x, _ := standInWatch(t, standin.Options{ForklessInfra: true, Method: "forkless", ModuleForcesFork: true}, 100, 10)
	s.Advance(2 * time.Second)
	if r := x.w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.sampleOfSave(t, "the forced fork", func(s *source.Sample) bool { return s.Save.Kind == source.SaveFork && source.ForcedFork(s) })
	s.Step(100)
	s.Advance(time.Second)
	s.Finish()
	if rep := x.nextReport(t, 20*time.Second); rep.Kind != source.SaveFork || !strings.Contains(rep.MethodNote, "bgsave-default-method is forkless") || rep.Status != source.StatusOK {
		t.Errorf("forced fork: %+v", rep)
	}
}

// TestStandInForklessSyncAndAOF: a replica's full sync without a fork is
// followed as a sync (keys, no total, no status of a BGSAVE); an AOF
// rewrite asked for meanwhile waits, scheduled, and runs after it.
func TestStandInForklessSyncAndAOF(t *testing.T) {
	s, x, c := standInWatch(t, standin.Options{ForklessInfra: true, Method: "forkless"}, 3000, 100)
	s.StartSync("127.0.0.1:7001")
	smp := x.sampleOfSave(t, "the sync", func(*source.Sample) bool { return true })
	if p := smp.Save; p.Kind != source.SaveForklessSync || p.Total.OK || p.Trigger.Kind != source.TriggerReplica {
		t.Fatalf("sync: %+v", p)
	}
	if r := c.Do(context.Background(), "BGREWRITEAOF").Val(); r != "Background append only file rewriting scheduled" {
		t.Fatalf("BGREWRITEAOF: %q", r)
	}
	s.Step(1200)
	s.Advance(time.Second)
	smp = x.sampleOfSave(t, "the sync's keys and the rewrite waiting", func(s *source.Sample) bool {
		return s.Save.Processed == source.Some[int64](1200) && s.Info.AOFRewriteScheduled.V == 1
	})
	if smp.Save.ETA.OK || smp.Save.Fraction().OK {
		t.Errorf("sync progress: %+v", smp.Save)
	}
	s.Step(1800)
	s.Finish()
	rep := x.nextReport(t, 20*time.Second)
	if rep.Kind != source.SaveForklessSync || rep.Status != "" || rep.ServerSeconds != source.Some[int64](1) || rep.COWFrom != source.FromNoChild {
		t.Errorf("sync report: %+v", rep)
	}
	x.sampleOfSave(t, "the AOF rewrite after the sync", func(s *source.Sample) bool { return s.Save.Kind == source.SaveAOF })
}

// TestStandInMethodSwitch: CONFIG SET bgsave-default-method sent with Do
// (the monitor's method switch) answers in the server's words, and the
// next sample after the answer carries the setting as the server has it
// now, not up to configEvery later; refused without the infrastructure,
// the server's own reason is the answer and the setting stays.
func TestStandInMethodSwitch(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		infra      bool
		want, said string
	}{
		{true, "forkless", "OK"},
		{false, "fork", "ERR CONFIG SET failed (possibly related to argument 'bgsave-default-method') - " +
			"'forkless' can only be selected when the server was started with 'forkless-infrastructure-enabled yes'"},
	} {
		_, x, _ := standInWatch(t, standin.Options{ForklessInfra: tt.infra}, 10, 10)
		x.next(t, 10*time.Second, "a sample with the settings", sampleWhere(func(s *source.Sample) bool { return s.Config.Method == "fork" }))
		r := x.w.Do(ctx, "CONFIG", "SET", "bgsave-default-method", "forkless")
		if said := r.Reply + r.Err; said != tt.said {
			t.Errorf("infra %v: CONFIG SET answered %q, want %q", tt.infra, said, tt.said)
		}
		x.next(t, 10*time.Second, "the answer", kind(source.EventCommand))
		s := x.next(t, 10*time.Second, "the sample after the answer", kind(source.EventSample)).Sample
		if s.Config.Method != tt.want {
			t.Errorf("infra %v: the sample after the answer reads method %q, want %q", tt.infra, s.Config.Method, tt.want)
		}
	}
}
