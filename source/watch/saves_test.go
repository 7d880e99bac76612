package watch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// saveServer starts a server holding n keys, with saves slowed down by
// delay microseconds per key, and a watch of it once connected; c is a
// client of the test's own.
func saveServer(t *testing.T, n, delay int) (srv *server.Server, x *watch, c *redis.Client) {
	t.Helper()
	srv = servertest.Start(t, server.Options{})
	w := startWatch(t, srv.Addr, Config{})
	w.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	if r := w.w.Do(context.Background(), "DEBUG", "POPULATE", strconv.Itoa(n)); r.Err != "" || r.Reply != "OK" {
		t.Fatalf("DEBUG POPULATE: %+v", r)
	}
	if r := w.w.Do(context.Background(), "CONFIG", "SET", "rdb-key-save-delay", strconv.Itoa(delay)); r.Err != "" {
		t.Fatalf("CONFIG SET: %+v", r)
	}
	return srv, w, servertest.Client(t, srv)
}

// configSet sets a server parameter through c, the test's own client of
// saveServer, and waits for a sample whose settings show it (seen). The
// watcher reads the settings with each sample, so what the test does
// next meets both the server and the watcher knowing the new value.
func (x *watch) configSet(t *testing.T, c *redis.Client, name, value string, seen func(*source.Sample) bool) {
	t.Helper()
	if err := c.ConfigSet(context.Background(), name, value).Err(); err != nil {
		t.Fatal(err)
	}
	x.next(t, 10*time.Second, name+" "+strconv.Quote(value)+" in the sampled settings", sampleWhere(seen))
}

func TestWatcherBGSAVE(t *testing.T) {
	srv, x, c := saveServer(t, 20000, 30)
	// Some seconds of history for the report's "before" figures.
	for range 3 {
		x.next(t, 10*time.Second, "a sample with ops", sampleWhere(func(s *source.Sample) bool { return s.OpsPerSec.OK }))
	}

	r := x.w.Do(context.Background(), "BGSAVE")
	if r.Err != "" || r.Reply != "Background saving started" || r.Command != "BGSAVE" || r.Done < r.Sent {
		t.Fatalf("BGSAVE: %+v", r)
	}
	cmd := x.next(t, 10*time.Second, "the BGSAVE command event", func(ev source.Event) bool {
		return ev.Kind == source.EventCommand && ev.Command.Command == "BGSAVE"
	})
	if *cmd.Command != r {
		t.Errorf("command event %+v, Do returned %+v", *cmd.Command, r)
	}
	st := x.next(t, 10*time.Second, "save started", kind(source.EventSaveStarted))
	if st.Sample == nil || st.Sample.Save == nil || st.Sample.Save.Kind != source.SaveFork {
		t.Fatalf("save started event without a running fork save: %+v", st.Sample)
	}
	end := x.next(t, 60*time.Second, "save ended", kind(source.EventSaveEnded))
	rep := end.Report
	info := source.ParseInfo(c.Info(context.Background(), "persistence").Val())
	if rep.Kind != source.SaveFork || rep.Status != "ok" || rep.Status != info.RDBLastStatus {
		t.Errorf("report kind %q status %q, server says %q", rep.Kind, rep.Status, info.RDBLastStatus)
	}
	if !rep.COW.OK || rep.COW != info.RDBLastCOW || rep.ServerSeconds != info.RDBLastTime {
		t.Errorf("report COW %+v seconds %+v, server says %+v %+v", rep.COW, rep.ServerSeconds, info.RDBLastCOW, info.RDBLastTime)
	}
	if rep.Started != st.Offset || rep.Observed <= 0 || rep.Ended != rep.Started+rep.Observed || rep.Node != testNode || rep.Addr != srv.Addr {
		t.Errorf("report times/ids: %+v (save started at %v)", rep, st.Offset)
	}
	if !rep.BaseUsed.OK || !rep.PeakUsedDelta.OK || !rep.OpsBefore.OK || rep.PingDuring.Count == 0 {
		t.Errorf("report baselines: %+v", rep)
	}
	if info.RDBSaves != source.Some[int64](1) {
		t.Errorf("rdb_saves %+v: one BGSAVE reported, server counts otherwise", info.RDBSaves)
	}
}

// childPIDs lists the children of process pid.
func childPIDs(t *testing.T, pid int) []int {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(s)
			out = append(out, n)
		}
	}
	return out
}

func TestWatcherSlowSaveProgress(t *testing.T) {
	const keys = 200000
	srv, x, _ := saveServer(t, keys, 20)

	if r := x.w.Do(context.Background(), "BGSAVE"); r.Err != "" {
		t.Fatalf("BGSAVE: %+v", r)
	}
	x.next(t, 10*time.Second, "save started", kind(source.EventSaveStarted))
	if r := x.w.Do(context.Background(), "BGSAVE"); !strings.Contains(r.Err, "Background save already in progress") || r.Reply != "" {
		t.Errorf("second BGSAVE: %+v", r)
	}

	processed := map[int64]bool{}
	var eta source.Opt[time.Duration]
	x.next(t, 60*time.Second, "progress moving with an ETA", func(ev source.Event) bool {
		if ev.Kind == source.EventSaveEnded {
			t.Fatalf("save ended before progress was seen: %+v", ev.Report)
		}
		if ev.Kind != source.EventSample || ev.Sample.Save == nil {
			return false
		}
		p := ev.Sample.Save
		if p.Kind != source.SaveFork || p.Total != source.Some[int64](keys) || !p.Processed.OK || !p.LiveCOW.OK {
			t.Fatalf("progress %+v: want kind fork, total %d", p, keys)
		}
		if f := p.Fraction(); !f.OK || f.V < 0 || f.V > 1 {
			t.Errorf("fraction %+v", f)
		}
		if p.ETA.OK {
			if p.ETA.V < 0 || p.ETA.V > 10*time.Minute {
				t.Errorf("ETA %s for a save of seconds", p.ETA.V)
			}
			eta = p.ETA
		}
		processed[p.Processed.V] = true
		return len(processed) >= 3 && eta.OK
	})

	// The rest would take many seconds: end the save by killing its child,
	// which the server reports as a failed save.
	kids := childPIDs(t, srv.PID())
	if len(kids) != 1 {
		t.Fatalf("server has children %v, want the save child", kids)
	}
	syscall.Kill(kids[0], syscall.SIGKILL)
	end := x.next(t, 30*time.Second, "save ended", kind(source.EventSaveEnded))
	if end.Report.Status != "err" || end.Report.Kind != source.SaveFork || end.Report.Observed < 500*time.Millisecond {
		t.Errorf("report of a killed save: %+v", end.Report)
	}
}

func TestWatcherAOFRewrite(t *testing.T) {
	_, x, c := saveServer(t, 20000, 30)
	r := x.w.Do(context.Background(), "BGREWRITEAOF")
	if r.Err != "" || !strings.Contains(r.Reply, "rewriting started") {
		t.Fatalf("BGREWRITEAOF: %+v", r)
	}
	st := x.next(t, 10*time.Second, "rewrite started", kind(source.EventSaveStarted))
	if st.Sample.Save.Kind != source.SaveAOF {
		t.Errorf("started kind %q", st.Sample.Save.Kind)
	}
	end := x.next(t, 60*time.Second, "rewrite ended", kind(source.EventSaveEnded))
	rep := end.Report
	info := source.ParseInfo(c.Info(context.Background(), "persistence").Val())
	if rep.Kind != source.SaveAOF || rep.Status != "ok" || rep.Status != info.AOFLastStatus ||
		rep.ServerSeconds != info.AOFLastRewriteTime || !rep.COW.OK || rep.COW != info.AOFLastCOW || rep.Observed <= 0 {
		t.Errorf("AOF report %+v; server: status %q seconds %+v cow %+v", rep, info.AOFLastStatus, info.AOFLastRewriteTime, info.AOFLastCOW)
	}
}

func TestWatcherQuickSaveBetweenSamples(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{Interval: time.Second})
	x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	// An empty database saves in milliseconds: most likely between two
	// samples one second apart.
	if r := x.w.Do(context.Background(), "BGSAVE"); r.Err != "" {
		t.Fatal(r.Err)
	}
	sawStart := false
	end := x.next(t, 20*time.Second, "save report", func(ev source.Event) bool {
		sawStart = sawStart || ev.Kind == source.EventSaveStarted
		return ev.Kind == source.EventSaveEnded
	})
	rep := end.Report
	if rep.Kind != source.SaveFork || rep.Status != "ok" || !rep.COW.OK || !rep.ServerSeconds.OK {
		t.Errorf("report %+v", rep)
	}
	// Unseen, it ran after the sample before and after the BGSAVE: the
	// most it lasted is from the later of the two to the end's sample.
	if !sawStart && (!rep.ObservedUpTo || rep.Observed <= 0 || rep.Observed > time.Second+100*time.Millisecond || rep.Started+rep.Observed != rep.Ended) {
		t.Errorf("unobserved save: observed %s (up to: %v), started %s, ended %s", rep.Observed, rep.ObservedUpTo, rep.Started, rep.Ended)
	}
}

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

// The watcher against the Valkey 9.2 stand-in (source/server/standin): no
// 9.2 server can be built here. Each test moves the stand-in's save one
// step at a time and waits for the watcher to sample each state.

// Who started a save, on real servers: each test starts the save the way
// it happens in the field and checks the watcher's label.

// infoSections are the INFO sections the watcher asks for (infoArgs
// without the command's name).
var infoSections = func() (sections []string) {
	for _, a := range infoArgs[1:] {
		sections = append(sections, a.(string))
	}
	return sections
}()

// nextReport waits for the next save report, checking on the way that
// every sample of the running save after the first carries the report's
// trigger (the first may not know a late answer yet).
func (x *watch) nextReport(t *testing.T, within time.Duration) *source.SaveReport {
	t.Helper()
	var triggers []source.Trigger
	ev := x.next(t, within, "a save report", func(ev source.Event) bool {
		if ev.Kind == source.EventSample && ev.Sample.Save != nil {
			triggers = append(triggers, ev.Sample.Save.Trigger)
		}
		return ev.Kind == source.EventSaveEnded
	})
	for i, tr := range triggers {
		if i > 0 && tr != ev.Report.Trigger {
			t.Errorf("progress %d of %d says trigger %+v, the report %+v", i, len(triggers), tr, ev.Report.Trigger)
		}
	}
	return ev.Report
}

func TestTriggerUserBGSAVE(t *testing.T) {
	_, x, c := saveServer(t, 20000, 30)
	x.next(t, 10*time.Second, "a sample with the settings", sampleWhere(func(s *source.Sample) bool { return s.Config.SaveSchedule.OK }))
	if r := x.w.Do(context.Background(), "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	rep := x.nextReport(t, 60*time.Second)
	if rep.Trigger != (source.Trigger{Kind: source.TriggerUser, Detail: "BGSAVE"}) {
		t.Errorf("trigger %+v, want the user's BGSAVE", rep.Trigger)
	}
	// The fork pause is this fork's, as the server reports it.
	stats := source.ParseInfo(c.Info(context.Background(), "stats").Val())
	if want := source.Some(time.Duration(stats.LatestForkUsec.V) * time.Microsecond); rep.ForkPause != want || want.V <= 0 {
		t.Errorf("fork pause %+v, latest_fork_usec says %+v", rep.ForkPause, want)
	}
	if len(rep.Curve) == 0 || !rep.PeakCOW.OK {
		t.Errorf("no curve (%d points) or peak COW %+v", len(rep.Curve), rep.PeakCOW)
	}
	for i := 1; i < len(rep.Curve); i++ {
		if p, q := rep.Curve[i-1], rep.Curve[i]; q.Progress < p.Progress || q.Elapsed <= p.Elapsed {
			t.Errorf("curve goes back: %+v then %+v", p, q)
		}
	}

	// A BGSAVE from another client is not the user's.
	if err := c.BgSave(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if rep := x.nextReport(t, 60*time.Second); rep.Trigger != (source.Trigger{Kind: source.TriggerOther}) {
		t.Errorf("another client's BGSAVE: trigger %+v", rep.Trigger)
	}
}

func TestTriggerAOFRewrites(t *testing.T) {
	_, x, c := saveServer(t, 10000, 50)
	ctx := context.Background()
	x.next(t, 10*time.Second, "a sample with the settings", sampleWhere(func(s *source.Sample) bool { return s.Config.AutoAOFRewritePerc.OK }))

	// The user's BGREWRITEAOF.
	if r := x.w.Do(ctx, "BGREWRITEAOF"); !r.OK() {
		t.Fatal(r.Err)
	}
	rep := x.nextReport(t, 60*time.Second)
	if rep.Kind != source.SaveAOF || rep.Trigger != (source.Trigger{Kind: source.TriggerUser, Detail: "BGREWRITEAOF"}) {
		t.Errorf("user's rewrite: kind %q trigger %+v", rep.Kind, rep.Trigger)
	}

	// Turning the AOF on makes the server write it by a rewrite.
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	rep = x.nextReport(t, 60*time.Second)
	if rep.Kind != source.SaveAOF || rep.Trigger != (source.Trigger{Kind: source.TriggerAOF, Detail: "appendonly turned on"}) {
		t.Errorf("appendonly yes: kind %q trigger %+v", rep.Kind, rep.Trigger)
	}

	// auto-aof-rewrite: the AOF grows past twice its base and past 1 MB.
	x.configSet(t, c, "auto-aof-rewrite-min-size", "1000000", func(s *source.Sample) bool {
		return s.Config.AutoAOFRewriteMinSize == source.Some[int64](1000000)
	})
	base := source.ParseInfo(c.Info(ctx, "persistence").Val()).AOFBaseSize
	if !base.OK {
		t.Fatal("no aof_base_size with the AOF on")
	}
	value := strings.Repeat("v", 300)
	for written := int64(0); written < 2*base.V+1000000; {
		p := c.Pipeline()
		for i := range 1000 {
			p.Set(ctx, "key:"+strconv.Itoa(i), value, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		written += 1000 * 340
	}
	rep = x.nextReport(t, 60*time.Second)
	if rep.Kind != source.SaveAOF || rep.Trigger.Kind != source.TriggerAOF || !strings.HasPrefix(rep.Trigger.Detail, "auto-aof-rewrite-percentage 100: ") {
		t.Errorf("auto rewrite: kind %q trigger %+v", rep.Kind, rep.Trigger)
	}
}

func TestTriggerSaveSchedule(t *testing.T) {
	_, x, c := saveServer(t, 10000, 50)
	ctx := context.Background()
	// The server saves by itself once a second has passed since its last
	// save and one key has changed.
	x.configSet(t, c, "save", "1 1", func(s *source.Sample) bool { return s.Config.SaveSchedule == source.Some("1 1") })
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rep := x.nextReport(t, 60*time.Second)
	if err := c.ConfigSet(ctx, "save", "").Err(); err != nil {
		t.Fatal(err)
	}
	if rep.Kind != source.SaveFork || rep.Trigger != (source.Trigger{Kind: source.TriggerSchedule, Detail: "save 1 1"}) {
		t.Errorf("kind %q trigger %+v, want the schedule's", rep.Kind, rep.Trigger)
	}
}

// TestTriggerReplicaFullSync: a replica started with --replicaof the
// watched server makes it fork for a full sync, diskless by default, and
// to disk with repl-diskless-sync no.
func TestTriggerReplicaFullSync(t *testing.T) {
	srv, x, c := saveServer(t, 20000, 30)
	ctx := context.Background()
	if err := c.ConfigSet(ctx, "repl-diskless-sync-delay", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for _, diskless := range []bool{true, false} {
		x.configSet(t, c, "repl-diskless-sync", map[bool]string{true: "yes", false: "no"}[diskless], func(s *source.Sample) bool { return s.Config.ReplDisklessSync == source.Some(diskless) })
		replica := servertest.Start(t, server.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(srv.Port)}})
		rep := x.nextReport(t, 60*time.Second)
		want := source.Trigger{Kind: source.TriggerReplica, Detail: "replica 127.0.0.1:" + strconv.Itoa(replica.Port) + ", disk"}
		if diskless {
			want.Detail += "less"
		}
		if rep.Kind != source.SaveFork || rep.Trigger != want {
			t.Errorf("diskless %v: kind %q trigger %+v, want %+v", diskless, rep.Kind, rep.Trigger, want)
		}
		rc := servertest.Client(t, replica)
		servertest.WaitFor(t, 60*time.Second, "the replica to be in sync", func() bool {
			return strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up")
		})
	}
	// The primary's INFO with its replicas still parses without allocating.
	text := c.Info(ctx, infoSections...).Val()
	in := source.ParseInfo(text)
	if in.ConnectedReplicas != source.Some[int64](2) || in.NumReplicas != 2 || in.Replicas[1].IP != "127.0.0.1" || in.Replicas[1].State != "online" || !in.Replicas[1].Port.OK {
		t.Errorf("replicas %+v %+v", in.ConnectedReplicas, in.Replicas[:2])
	}
	text2 := strings.Clone(text)
	if n := testing.AllocsPerRun(100, func() { source.ParseInfoInto(&in, text2) }); n != 0 {
		t.Errorf("ParseInfoInto of a primary with replicas allocates %.1f times", n)
	}
}
