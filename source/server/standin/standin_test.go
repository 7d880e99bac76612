package standin

import (
	"context"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func persistence(t *testing.T, c *Client) source.Info {
	t.Helper()
	text, err := c.Info(context.Background(), "server", "clients", "stats", "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	return source.ParseInfo(text)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStandInConfigAndBGSAVE: the settings and the command as the real
// source has them: the infrastructure immutable, forkless refused
// without it, BGSAVE with no method argument, one save at a time.
func TestStandInConfigAndBGSAVE(t *testing.T) {
	ctx := context.Background()
	s := Start(t, Options{})
	c := s.ClientRESP3(t)
	errs := []struct {
		args []any
		want string
	}{
		{[]any{"CONFIG", "SET", "forkless-infrastructure-enabled", "yes"},
			"ERR CONFIG SET failed (possibly related to argument 'forkless-infrastructure-enabled') - can't set immutable config"},
		{[]any{"CONFIG", "SET", "bgsave-default-method", "forkless"},
			"ERR CONFIG SET failed (possibly related to argument 'bgsave-default-method') - 'forkless' can only be selected when the server was started with 'forkless-infrastructure-enabled yes'"},
		{[]any{"BGSAVE", "FORKLESS"}, "ERR syntax error"},
		{[]any{"BGSAVE", "CANCEL"}, "ERR Background saving is currently not in progress or scheduled"},
		{[]any{"NOSUCHCOMMAND"}, "ERR unknown command 'NOSUCHCOMMAND', with args beginning with: "},
	}
	for _, e := range errs {
		if err := c.Do(ctx, e.args...).Err(); err == nil || err.Error() != e.want {
			t.Errorf("%v: %v, want %q", e.args, err, e.want)
		}
	}
	if got := s.Unknown(); len(got) != 1 || got[0] != "NOSUCHCOMMAND" {
		t.Errorf("unknown commands %q", got)
	}
	if v := c.ConfigGet(ctx, "bgsave-default-method").Val(); v["bgsave-default-method"] != "fork" {
		t.Errorf("method %v", v)
	}
	on := Start(t, Options{ForklessInfra: true})
	oc := on.ClientRESP3(t)
	must(t, oc.ConfigSet(ctx, "bgsave-default-method", "forkless").Err())
	if v := oc.ConfigGet(ctx, "*forkless*").Val(); v["forkless-infrastructure-enabled"] != "yes" || len(v) != 1 {
		t.Errorf("CONFIG GET *forkless*: %v", v)
	}
	if r := oc.BgSave(ctx).Val(); r != "Background saving started" {
		t.Errorf("BGSAVE: %q", r)
	}
	if err := oc.BgSave(ctx).Err(); err == nil || err.Error() != "ERR Background save already in progress" {
		t.Errorf("second BGSAVE: %v", err)
	}
}

// TestStandInForklessSave: a forkless BGSAVE after a fork save, as INFO
// shows it step by step.
func TestStandInForklessSave(t *testing.T) {
	ctx := context.Background()
	s := Start(t, Options{ForklessInfra: true})
	c := s.ClientRESP3(t)
	s.Load("k:", 3000, 600)
	must(t, c.BgSave(ctx).Err())
	for range 30 {
		must(t, c.Set(ctx, "k:7", "written while the fork child holds its page", 0).Err())
	}
	s.Step(3000)
	s.Advance(2 * time.Second)
	s.Finish()
	fork := persistence(t, c)
	if fork.RDBLastCOW.V != 30*pageSize || fork.RDBLastType != "fork" || fork.TotalForks.V != 1 || fork.RDBSaves.V != 1 {
		t.Fatalf("after the fork save: %+v", fork)
	}

	must(t, c.ConfigSet(ctx, "bgsave-default-method", "forkless").Err())
	must(t, c.BgSave(ctx).Err())
	in := persistence(t, c)
	// Counted at the start, no fork, no key yet: ETA -1.
	if in.RDBSaves.V != 2 || in.TotalForks.V != 1 || in.RDBCurrentType != "forkless" || in.ForklessETA.V != -1 || in.KeysTotal.V != 3000 {
		t.Fatalf("forkless start: %+v", in)
	}
	s.Step(1000)
	s.Advance(500 * time.Millisecond)
	in = persistence(t, c)
	// The thread stores its count at most once a second; the ETA comes
	// from its live count: 0.5 s for 1000 keys, 2000 left.
	if in.KeysProcessed.V != 0 || in.ForklessETA.V != 1 {
		t.Errorf("half a second in: processed %+v, ETA %+v", in.KeysProcessed, in.ForklessETA)
	}
	s.Advance(500 * time.Millisecond)
	if in = persistence(t, c); in.KeysProcessed.V != 1000 || in.CurrentForkPerc.V < 33 || in.CurrentForkPerc.V > 34 || in.CurrentCOW.V != 0 {
		t.Errorf("a second in: %+v", in)
	}
	s.Step(2000)
	in = persistence(t, c)
	if in.RDBInProgress.V != 1 || in.ForklessETA.V != -1 {
		t.Errorf("the tail: in progress %+v, ETA %+v", in.RDBInProgress, in.ForklessETA)
	}
	s.Advance(2 * time.Second)
	s.Finish()
	in = persistence(t, c)
	if in.RDBInProgress.V != 0 || in.RDBLastType != "forkless" || in.RDBLastTime.V != 3 || in.RDBLastCOW != fork.RDBLastCOW ||
		in.RDBLastSaveTime.V <= fork.RDBLastSaveTime.V || in.KeysTotal.V != 0 || in.RDBChangesSinceSave.V != 0 {
		t.Errorf("after the forkless save: %+v", in)
	}
}

// TestStandInCancelAndAbort: BGSAVE CANCEL answers at once and the
// forkless thread stops later, setting the duration only; FLUSHALL
// aborts a save, leaving status, type, lastsave and the counter.
func TestStandInCancelAndAbort(t *testing.T) {
	ctx := context.Background()
	s := Start(t, Options{ForklessInfra: true, Method: "forkless"})
	c := s.ClientRESP3(t)
	s.Load("k:", 100, 10)
	before := persistence(t, c)
	must(t, c.BgSave(ctx).Err())
	s.Advance(time.Second)
	if r, err := c.Do(ctx, "BGSAVE", "CANCEL").Text(); err != nil || r != "Background saving cancelled" {
		t.Fatalf("cancel: %q %v", r, err)
	}
	if in := persistence(t, c); in.RDBInProgress.V != 1 {
		t.Errorf("just cancelled: in progress %+v", in.RDBInProgress)
	}
	s.SettleCancel()
	in := persistence(t, c)
	if in.RDBInProgress.V != 0 || in.RDBLastStatus != before.RDBLastStatus || in.RDBLastType != before.RDBLastType || in.RDBLastTime.V != 1 || in.RDBSaves.V != 1 {
		t.Errorf("cancelled: %+v", in)
	}
	must(t, c.BgSave(ctx).Err())
	s.Advance(3 * time.Second)
	must(t, c.FlushAll(ctx).Err())
	after := persistence(t, c)
	if after.RDBInProgress.V != 0 || after.RDBLastStatus != "ok" || after.RDBLastSaveTime != before.RDBLastSaveTime || after.RDBLastTime.V != 1 ||
		after.RDBChangesSinceSave.V != before.RDBChangesSinceSave.V+100 {
		t.Errorf("aborted: %+v (before %+v)", after, before)
	}
}

// TestStandInBlockedWriters: during a forkless save a write to a key the
// thread has not written waits for it (blocked_clients counts it) unless
// its value is small enough to clone; reads never wait.
func TestStandInBlockedWriters(t *testing.T) {
	ctx := context.Background()
	s := Start(t, Options{ForklessInfra: true, Method: "forkless"})
	c := s.ClientRESP3(t)
	s.Load("big:", 10, 600)
	must(t, c.Set(ctx, "small", "x", 0).Err())
	must(t, c.BgSave(ctx).Err())
	if err := c.Set(ctx, "small", "y", 0).Err(); err != nil {
		t.Fatal("a small value is cloned, its write goes on:", err)
	}
	done := make(chan error, 1)
	w := s.ClientRESP3(t)
	go func() { done <- w.Set(ctx, "big:9", "new", 0).Err() }()
	s.Wait(t, "a blocked writer", func(v View) bool { return v.Blocked == 1 })
	if in := persistence(t, c); in.BlockedClients.V != 1 || c.Get(ctx, "big:9").Val() != string(make([]byte, 600)) {
		t.Errorf("blocked_clients %+v; the read must see the old value at once", in.BlockedClients)
	}
	s.Step(9) // big:0 .. big:8 (small comes last)
	select {
	case err := <-done:
		t.Fatalf("the writer went on before its key was written: %v", err)
	default:
	}
	s.Step(1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if in := persistence(t, c); in.BlockedClients.V != 0 {
		t.Errorf("after the key was written: blocked_clients %+v", in.BlockedClients)
	}
}

// TestStandInSyncAndAOF: a forkless full sync counts in no rdb_saves and
// has no total; an AOF rewrite asked for during it waits, scheduled.
func TestStandInSyncAndAOF(t *testing.T) {
	ctx := context.Background()
	s := Start(t, Options{ForklessInfra: true, Method: "forkless"})
	c := s.ClientRESP3(t)
	s.Load("k:", 50, 10)
	s.StartSync("127.0.0.1:7001")
	if r := c.Do(ctx, "BGREWRITEAOF").Val(); r != "Background append only file rewriting scheduled" {
		t.Errorf("BGREWRITEAOF: %q", r)
	}
	s.Step(20)
	s.Advance(time.Second)
	in := source.ParseInfo(c.Info(ctx, "persistence", "replication").Val())
	if in.RDBInProgress.V != 1 || in.RDBCurrentType != "forkless" || in.KeysTotal.V != 0 || in.KeysProcessed.V != 20 || in.RDBSaves.V != 0 ||
		in.ForklessETA.V != -1 || in.AOFRewriteScheduled.V != 1 || in.Replicas[0].State != "wait_bgsave" {
		t.Errorf("sync: %+v", in)
	}
	s.Step(30)
	s.Finish()
	in = source.ParseInfo(c.Info(ctx, "persistence").Val())
	if in.RDBInProgress.V != 0 || in.RDBLastType != "none" || in.RDBLastTime.V != 1 || in.AOFRewriteInProgress.V != 1 || in.AOFRewriteScheduled.V != 0 {
		t.Errorf("after the sync: %+v", in)
	}
}
