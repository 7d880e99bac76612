package watch

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// writeDuring overwrites keys through c until the server's save ends, so
// that the fork's child copies pages.
func writeDuring(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	for i := 0; strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress:1"); i = (i + 1) % 20000 {
		if err := c.Set(ctx, "key:"+strconv.Itoa(i), "overwritten during the save", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFlushallAbortsForkSave: on a real server (Redis 7.0.15 here),
// FLUSHALL during a fork BGSAVE kills the child with SIGUSR1, which is no
// error: rdb_last_bgsave_status stays ok, rdb_last_save_time stays, the
// change counter grows by the keys flushed, rdb_last_cow_size keeps the
// last save's figure. vkwatch reports the save aborted, says why, and
// shows none of the earlier save's figures as this one's.
func TestFlushallAbortsForkSave(t *testing.T) {
	_, x, c := saveServer(t, 20000, 30)
	ctx := context.Background()

	// A save that copied pages, so that rdb_last_cow_size holds a figure.
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	writeDuring(t, c)
	first := x.nextReport(t, 60*time.Second)
	info := source.ParseInfo(c.Info(ctx, "persistence").Val())
	if first.Status != source.StatusOK || first.COW != info.RDBLastCOW || first.COWFrom != source.FromRDBLastCOW || info.RDBLastCOW.V == 0 {
		t.Fatalf("first save: status %q (%s), COW %+v from %q; server: rdb_last_cow_size %+v", first.Status, first.Evidence, first.COW, first.COWFrom, info.RDBLastCOW)
	}
	// rdb_last_save_time has a second's resolution: a save that began in
	// the second the last one ended could not be told from an abort by it.
	x.next(t, 10*time.Second, "a sample in a later second than the first save's end", sampleWhere(func(s *source.Sample) bool {
		return s.Info.ServerTimeUsec.V/1_000_000 > s.Info.RDBLastSaveTime.V && s.Info.RDBLastSaveTime.OK
	}))

	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	x.next(t, 10*time.Second, "the second save running", kind(source.EventSaveStarted))
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rep := x.nextReport(t, 60*time.Second)
	after := source.ParseInfo(c.Info(ctx, "persistence").Val())
	if after.RDBLastStatus != "ok" || after.RDBLastSaveTime != info.RDBLastSaveTime || after.RDBLastCOW != info.RDBLastCOW {
		t.Fatalf("the server did not behave as the test expects: status %q, lastsave %+v (was %+v), rdb_last_cow_size %+v (was %+v)",
			after.RDBLastStatus, after.RDBLastSaveTime, info.RDBLastSaveTime, after.RDBLastCOW, info.RDBLastCOW)
	}
	if rep.Kind != source.SaveFork || rep.Status != source.StatusAborted ||
		!strings.HasPrefix(rep.Evidence, "rdb_last_save_time not advanced, rdb_changes_since_last_save not reset, rdb_last_bgsave_status unchanged") {
		t.Errorf("aborted save: kind %q status %q, evidence %q", rep.Kind, rep.Status, rep.Evidence)
	}
	if rep.COW.OK || rep.COWFrom != "" {
		t.Errorf("aborted save: COW %+v from %q; rdb_last_cow_size is the first save's (%+v)", rep.COW, rep.COWFrom, info.RDBLastCOW)
	}
	// The killed child's duration is set by the server (0 or more); it is
	// the report's only when it differs from the first save's.
	if rep.ServerSeconds.OK && (rep.ServerSeconds == first.ServerSeconds || rep.ServerSeconds != after.RDBLastTime) {
		t.Errorf("aborted save: server seconds %+v; first save's %+v, server now %+v", rep.ServerSeconds, first.ServerSeconds, after.RDBLastTime)
	}
}

// TestBlockedClientsAroundSaves: blocked_clients is read while a save
// runs (and just before and after), never while the server is at rest.
// On a real server a client in BLPOP counts in it: here before, during
// and after a fork save alike (a fork save blocks no writer).
func TestBlockedClientsAroundSaves(t *testing.T) {
	srv, x, c := saveServer(t, 20000, 30)
	ctx := context.Background()
	waiter := servertest.Client(t, srv)
	go waiter.BLPop(ctx, 0, "a list nobody pushes to")
	servertest.WaitFor(t, 10*time.Second, "a client blocked in BLPOP", func() bool {
		return strings.Contains(c.Info(ctx, "clients").Val(), "blocked_clients:1\r")
	})
	for range 3 {
		ev := x.next(t, 10*time.Second, "a sample at rest", kind(source.EventSample))
		if ev.Sample.Info.BlockedClients.OK {
			t.Fatalf("a server at rest was asked for INFO clients: blocked_clients %+v", ev.Sample.Info.BlockedClients)
		}
	}
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	ev := x.next(t, 60*time.Second, "the save's report", func(ev source.Event) bool {
		if s := ev.Sample; ev.Kind == source.EventSample && s.Save != nil && s.Info.BlockedClients != source.Some[int64](1) {
			t.Errorf("a sample of the running save: blocked_clients %+v, want the BLPOP's 1", s.Info.BlockedClients)
		}
		return ev.Kind == source.EventSaveEnded
	})
	if r := ev.Report; r.BlockedDuring != source.Some[int64](1) || r.BlockedAfter != source.Some[int64](1) {
		t.Errorf("report: blocked %+v before, %+v during, %+v after", r.BlockedBefore, r.BlockedDuring, r.BlockedAfter)
	}
	// At rest again once the save command is old news.
	x.next(t, 2*comingFor, "a sample at rest without INFO clients", sampleWhere(func(s *source.Sample) bool {
		return s.Save == nil && !s.Info.BlockedClients.OK
	}))
}
