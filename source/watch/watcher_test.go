package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

// watch runs a Watcher in the background and collects its events.
type watch struct {
	w      *Watcher
	clock  *source.Clock
	events chan source.Event
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	seen   []source.Event // every event taken from events, in order
}

// startWatch runs a watcher of addr until the test ends (see watchEndpoint).
func startWatch(t *testing.T, addr string, cfg Config) *watch {
	t.Helper()
	ep := sourcetest.Endpoint(t, addr)
	return watchEndpoint(t, ep, cfg)
}

// stop ends Run, waits for it and closes the watcher.
func (x *watch) stop() {
	x.once.Do(func() {
		x.cancel()
		<-x.done
		x.w.Close()
	})
}

// next returns the first event (from now on) for which match holds.
func (x *watch) next(t *testing.T, within time.Duration, what string, match func(source.Event) bool) source.Event {
	t.Helper()
	ev, ok := servertest.Receive(x.events, within, func(ev source.Event) bool {
		x.seen = append(x.seen, ev)
		if ev.Node != testNode {
			t.Errorf("event for node %q, want %q", ev.Node, testNode)
		}
		if !ev.At.Equal(x.clock.At(ev.Offset)) {
			t.Errorf("event At %v is not the clock's time of its offset %v", ev.At, ev.Offset)
		}
		return match(ev)
	})
	if !ok {
		t.Fatalf("no %s within %s", what, within)
	}
	return ev
}

// count is how many events of kind k next has taken so far.
func (x *watch) count(k source.EventKind) int {
	n := 0
	for _, ev := range x.seen {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func kind(k source.EventKind) func(source.Event) bool {
	return func(ev source.Event) bool { return ev.Kind == k }
}

// sampleWhere matches a sample event for which cond holds.
func sampleWhere(cond func(*source.Sample) bool) func(source.Event) bool {
	return func(ev source.Event) bool { return ev.Kind == source.EventSample && cond(ev.Sample) }
}

func TestWatcherSamples(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	c := servertest.Client(t, srv)
	pid := int64(srv.PID())
	leaks := goleak.IgnoreCurrent()

	var writerOps atomic.Uint64
	var procCalls atomic.Int64
	cfg := Config{
		WriterOps: writerOps.Load,
		Proc: func(p int64) source.ProcMem {
			if p != pid {
				t.Errorf("Proc called with pid %d, want %d", p, pid)
			}
			procCalls.Add(1)
			return source.ProcMem{RSS: source.Some[int64](4242)}
		},
	}
	// Asked before the watch starts: the test's own commands (and its
	// connection's HELLO) must not fall into the idle intervals measured
	// below, where they would count as the server's load.
	want := source.ParseInfo(c.Info(context.Background(), "server").Val())
	x := startWatch(t, srv.Addr, cfg)

	ev := x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	id := ev.Identity
	if id.Addr != srv.Addr || id.ServerName != "redis" || id.Version != want.Version || id.ProcessID != source.Some(pid) ||
		!id.Local || id.Role != "master" {
		t.Errorf("identity %+v", id)
	}

	var samples []*source.Sample
	x.next(t, 20*time.Second, "12 samples", func(ev source.Event) bool {
		if ev.Kind == source.EventSample {
			samples = append(samples, ev.Sample)
		} else {
			t.Errorf("unexpected %v event: %+v", ev.Kind, ev)
		}
		return len(samples) == 12
	})
	first := samples[0]
	if first.OpsPerSec.OK || first.WriterOpsPerSec.OK {
		t.Errorf("rates on the first sample after connect: %+v %+v", first.OpsPerSec, first.WriterOpsPerSec)
	}
	var idle float64
	for i, s := range samples {
		if !s.Info.UsedMemory.OK || s.Info.UsedMemory.V <= 0 || !s.Info.RSS.OK {
			t.Errorf("sample %d: used_memory %+v rss %+v", i, s.Info.UsedMemory, s.Info.RSS)
		}
		// Redis 7 has no bgsave-default-method: n/a, not an error.
		if s.Config.Method != "" || s.Config.Err != "" || !s.Config.RDBKeySaveDelay.OK {
			t.Errorf("sample %d: config %+v", i, s.Config)
		}
		if s.Proc.RSS != source.Some[int64](4242) {
			t.Errorf("sample %d: Proc %+v not from cfg.Proc", i, s.Proc)
		}
		if s.Save != nil {
			t.Errorf("sample %d: a save on an idle server: %+v", i, s.Save)
		}
		if i == 0 {
			continue
		}
		if s.Seq != samples[i-1].Seq+1 || s.Offset <= samples[i-1].Offset {
			t.Errorf("sample %d: seq %d offset %v after seq %d offset %v", i, s.Seq, s.Offset, samples[i-1].Seq, samples[i-1].Offset)
		}
		if !s.OpsPerSec.OK || s.OpsPerSec.V < 0 || s.WriterOpsPerSec != source.Some(0.0) {
			t.Errorf("sample %d: ops %+v writer %+v", i, s.OpsPerSec, s.WriterOpsPerSec)
		}
		idle += s.OpsPerSec.V
		if i >= 2 && (s.Ping.Count == 0 || s.Ping.Min <= 0 || s.Ping10s.Count < s.Ping.Count) {
			t.Errorf("sample %d: ping %+v rolling %+v", i, s.Ping, s.Ping10s)
		}
	}
	// ~500 PINGs/s and 5 INFO/s hit the server; all are vkwatch's own.
	if mean := idle / float64(len(samples)-1); mean > 15 {
		rates := make([]string, 0, len(samples))
		for _, s := range samples[1:] {
			rates = append(rates, fmt.Sprintf("%.0f", s.OpsPerSec.V))
		}
		t.Errorf("idle server shows %.1f ops/s (samples: %s): vkwatch's own commands are not subtracted",
			mean, strings.Join(rates, " "))
	}
	if procCalls.Load() < int64(len(samples)) {
		t.Errorf("Proc called %d times for %d samples", procCalls.Load(), len(samples))
	}

	// Known load: 3000 commands from another client, 700 writer ops.
	pipe := c.Pipeline()
	for i := range 3000 {
		pipe.Set(context.Background(), "k"+strconv.Itoa(i), "v", 0)
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	writerOps.Add(700)
	loaded := x.clock.Offset()
	// Samples taken while the load ran may still be queued: the sums go up
	// to the second sample answered after the load, whose INFO was sent
	// (after the first's answer) once the server had run every SET.
	var after *source.Sample
	answered := 0
	x.next(t, 10*time.Second, "two samples after the load", func(ev source.Event) bool {
		if ev.Kind == source.EventSample && ev.Sample.Offset > loaded {
			after = ev.Sample
			answered++
		}
		return answered == 2
	})
	prev := samples[len(samples)-1]
	var cmds, writer float64
	for _, ev := range x.seen {
		if ev.Kind != source.EventSample || ev.Sample.Seq <= prev.Seq {
			continue
		}
		s := ev.Sample
		dt := (s.Offset - prev.Offset).Seconds()
		cmds += s.OpsPerSec.V * dt
		writer += s.WriterOpsPerSec.V * dt
		prev = s
		if s == after {
			break
		}
	}
	if cmds < 2990 || cmds > 3030 {
		t.Errorf("ops/s over the load add up to %.1f commands, want ~3000", cmds)
	}
	if writer < 699.9 || writer > 700.1 {
		t.Errorf("writer ops/s add up to %.2f, want 700", writer)
	}

	x.stop()
	c.Close()
	goleak.VerifyNone(t, leaks)
}

// TestWatcherCountsOwnCommands: every command the watcher's clients had
// the server run is in ownCmds, the HELLO of each new connection included
// (the sampler's INFO connection, the pipeline connection of CONFIG GET,
// Do's connection), and the user's command sent with Do is not; a command
// the server refuses (CONFIG GET for a user without +config) is not
// either, as the server does not count it. The server's own
// total_commands_processed is the reference.
func TestWatcherCountsOwnCommands(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	admin := servertest.Client(t, srv)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "noconfig", "reset", "on", ">nc-pass-1234",
		"-@all", "+info", "+ping", "+set", "~*").Err(); err != nil {
		t.Fatal(err)
	}
	total := func() int64 {
		// INFO's answer leaves out the INFO itself.
		n := source.ParseInfo(admin.Info(ctx, "stats").Val()).TotalCommands
		if !n.OK {
			t.Fatal("no total_commands_processed")
		}
		return n.V
	}
	for _, addr := range []string{srv.Addr, "redis://noconfig:nc-pass-1234@" + srv.Addr} {
		ep := sourcetest.Endpoint(t, addr)
		before := total() + 1 // and the INFO of total
		w := New(testNode, ep, source.NewClock(), Config{})
		if _, err := w.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		cfg := w.readConfig(ctx)
		if r := w.Do(ctx, "SET", "k", "v"); r.Err != "" {
			t.Fatalf("SET: %+v", r)
		}
		w.Close()
		ran := total() - before - 1 // the user's SET
		if own := w.ownCmds.Load(); int64(own) != ran {
			t.Errorf("%s: the watcher counted %d commands of its own, the server ran %d besides the user's SET (config %+v)",
				ep, own, ran, cfg)
		}
		if ep.Username != "" && !strings.HasPrefix(cfg.Err, "NOPERM") {
			t.Errorf("%s: CONFIG GET was not refused: %+v", ep, cfg)
		}
	}
}

func TestWatcherCloseEndsRun(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	leaks := goleak.IgnoreCurrent()
	ep, _ := source.ParseAddress(srv.Addr)
	w := New(testNode, ep, source.NewClock(), Config{})
	events := make(chan source.Event, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(context.Background(), func(ev source.Event) {
			select {
			case events <- ev:
			default:
			}
		})
	}()
	timeout := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case ev := <-events:
			got = ev.Kind == source.EventSample
		case <-timeout:
			t.Fatal("no sample")
		}
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	if r := w.Do(context.Background(), "PING"); r.OK() {
		t.Errorf("Do after Close worked: %+v", r)
	}
	goleak.VerifyNone(t, leaks)
}

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
	if !sawStart && (rep.Observed != 0 || rep.Started != rep.Ended) {
		t.Errorf("unobserved save with Observed %s", rep.Observed)
	}
}

func TestWatcherReconnectsAfterRestart(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	x.next(t, 10*time.Second, "a sample with ops", sampleWhere(func(s *source.Sample) bool { return s.OpsPerSec.OK }))
	oldPID := srv.PID()

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := x.next(t, 10*time.Second, "disconnected", kind(source.EventDisconnected))
	if down.Err == "" || strings.Contains(down.Err, "\n") {
		t.Errorf("disconnect reason %q", down.Err)
	}
	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	up := x.next(t, 10*time.Second, "connected again", kind(source.EventConnected))
	if took := time.Since(restarted); took > 2*time.Second {
		t.Errorf("reconnected %s after the restart, want within 2 s", took)
	}
	if up.Identity.ProcessID != source.Some(int64(srv.PID())) || srv.PID() == oldPID {
		t.Errorf("identity after restart %+v (old pid %d, new %d)", up.Identity, oldPID, srv.PID())
	}
	n := x.count(source.EventDisconnected)
	if n != 1 {
		t.Errorf("%d disconnect events for one outage, want 1", n)
	}
	first := x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	if first.Sample.OpsPerSec.OK {
		t.Errorf("ops/s %v on the first sample after reconnecting", first.Sample.OpsPerSec.V)
	}
	x.next(t, 10*time.Second, "a sample with ops", sampleWhere(func(s *source.Sample) bool { return s.OpsPerSec.OK }))
}

func TestWatcherDebugSleepShowsInPing(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{})
	x.next(t, 10*time.Second, "a sample with PINGs", sampleWhere(func(s *source.Sample) bool { return s.Ping.Count > 0 }))
	// A PING sent just after the sleep began waits one probe interval
	// less than the sleep: sleep a little over 1 s.
	if r := x.w.Do(context.Background(), "DEBUG", "SLEEP", "1.05"); r.Err != "" {
		t.Fatal(r.Err)
	}
	x.next(t, 10*time.Second, "a sample whose worst PING is >= 1s", func(ev source.Event) bool {
		if ev.Kind == source.EventDisconnected {
			t.Errorf("a 1 s stall reported as %q", ev.Err)
		}
		return ev.Kind == source.EventSample && ev.Sample.Ping.Worst() >= time.Second && ev.Sample.Ping10s.Worst() >= time.Second
	})
}

func TestWatcherFrozenServer(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{})
	last := x.next(t, 10*time.Second, "a sample", kind(source.EventSample)).Sample
	thaw := servertest.Freeze(t, srv)
	ev := x.next(t, 10*time.Second, "not answering", func(ev source.Event) bool {
		if ev.Kind == source.EventSample {
			last = ev.Sample
		}
		return ev.Kind == source.EventDisconnected
	})
	if !ev.Stalled || !strings.HasPrefix(ev.Err, "not answering for ") {
		t.Errorf("stall reported as %q (stalled %v)", ev.Err, ev.Stalled)
	}
	thaw()
	x.next(t, 10*time.Second, "connected again", kind(source.EventConnected))
	s := x.next(t, 10*time.Second, "a sample", kind(source.EventSample)).Sample
	if s.Seq != last.Seq+1 {
		t.Errorf("first sample after the stall has seq %d, last before %d", s.Seq, last.Seq)
	}
	if s.Ping.Worst() < time.Second && s.Ping10s.Worst() < time.Second {
		t.Errorf("the stall does not show in the PING summary: %+v / %+v", s.Ping, s.Ping10s)
	}
}

func TestConnectErrors(t *testing.T) {
	port, err := server.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	connect := func(addr string, cfg Config) (source.Identity, error) {
		ep := sourcetest.Endpoint(t, addr)
		w := New(testNode, ep, nil, cfg)
		defer w.Close()
		return w.Connect(ctx)
	}
	var causes []string
	asConnectError := func(err error) *ConnectError {
		t.Helper()
		var ce *ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v (%T) is not a *ConnectError", err, err)
		}
		causes = append(causes, ce.Error())
		if strings.Contains(ce.Error(), "\n") {
			t.Errorf("error is not one line: %q", ce.Error())
		}
		return ce
	}

	refused := "127.0.0.1:" + strconv.Itoa(port)
	defer func() { t.Log("causes seen:", causes) }()
	_, err = connect(refused, Config{})
	if ce := asConnectError(err); ce.Error() != refused+": connection refused" || ce.Unwrap() == nil {
		t.Errorf("refused: %q", ce.Error())
	}

	_, err = connect(filepath.Join(t.TempDir(), "none.sock"), Config{})
	if ce := asConnectError(err); !strings.HasSuffix(ce.Error(), "none.sock: no such socket") {
		t.Errorf("missing socket: %q", ce.Error())
	}

	srv := servertest.Start(t, server.Options{Password: "s3cr3t-pass"})
	_, err = connect(srv.Addr, Config{})
	if ce := asConnectError(err); ce.Error() != srv.Addr+": NOAUTH password required" {
		t.Errorf("no password: %q", ce.Error())
	}
	_, err = connect("redis://:not-the-pass@"+srv.Addr, Config{})
	if ce := asConnectError(err); !strings.HasPrefix(ce.Error(), srv.Addr+": authentication failed: WRONGPASS") ||
		strings.Contains(ce.Error(), "not-the-pass") {
		t.Errorf("wrong password: %q", ce.Error())
	}
	id, err := connect("redis://:s3cr3t-pass@"+srv.Addr, Config{})
	if err != nil || id.ProcessID != source.Some(int64(srv.PID())) || strings.Contains(id.Addr, "s3cr3t") {
		t.Errorf("right password: %+v, %v", id, err)
	}

	// TLS to a plain port: the handshake fails or hangs.
	plain := servertest.Start(t, server.Options{})
	_, err = connect("rediss://"+plain.Addr, Config{ConnectTimeout: 2 * time.Second})
	if ce := asConnectError(err); !strings.Contains(ce.Cause, "TLS") {
		t.Errorf("TLS to a plain port: %q", ce.Error())
	}

	// Unreadable TLS files are a connect error too.
	ep, _ := source.ParseAddress("rediss://" + plain.Addr)
	ep.TLS.CACert = filepath.Join(t.TempDir(), "missing.pem")
	w := New(testNode, ep, nil, Config{})
	_, err = w.Connect(ctx)
	if ce := asConnectError(err); !strings.Contains(ce.Cause, "--cacert") {
		t.Errorf("missing CA file: %q", ce.Error())
	}
	w.Close()
}

func TestWatcherRunReportsRefusedOnce(t *testing.T) {
	port, err := server.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	x := startWatch(t, "127.0.0.1:"+strconv.Itoa(port), Config{})
	ev := x.next(t, 10*time.Second, "disconnected", kind(source.EventDisconnected))
	if ev.Err != "connection refused" {
		t.Errorf("reason %q", ev.Err)
	}
	// Retries go on (every <= 500 ms): a server that appears on the port is
	// picked up.
	srv := servertest.Start(t, server.Options{Port: port})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	_ = srv
	n := x.count(source.EventDisconnected)
	if n != 1 {
		t.Errorf("%d disconnect events while retrying, want 1", n)
	}
}

func TestWatcherConfigNOPERM(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	c := servertest.Client(t, srv)
	if err := c.Do(context.Background(), "ACL", "SETUSER", "watcher", "on", ">w-pass", "~*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	x := startWatch(t, "redis://watcher:w-pass@"+srv.Addr, Config{})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	for range 3 {
		s := x.next(t, 10*time.Second, "a sample", kind(source.EventSample)).Sample
		if !strings.Contains(s.Config.Err, "NOPERM") || s.Config.Method != "" || !s.Info.UsedMemory.OK {
			t.Errorf("config %+v used %+v", s.Config, s.Info.UsedMemory)
		}
	}
	r := x.w.Do(context.Background(), "CONFIG", "GET", "maxmemory")
	if !strings.HasPrefix(r.Err, "NOPERM") {
		t.Errorf("Do of a forbidden command: %+v", r)
	}
}

// A cluster node says so on connecting (INFO cluster, asked once), a plain
// server does not.
func TestIdentityCluster(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}, true},
	} {
		s := servertest.Start(t, server.Options{Args: c.args})
		ep := sourcetest.Endpoint(t, s.Addr)
		w := New(ep.Node(), ep, nil, Config{})
		id, err := w.Connect(context.Background())
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if id.Cluster != c.want {
			t.Errorf("%v: Identity.Cluster = %v, want %v", c.args, id.Cluster, c.want)
		}
	}
}

// TestSampleWaitOnGrid: the sampler's next wake-up is the next point of its
// grid (multiples of the interval, shifted by half the greatest common
// divisor of the two intervals), strictly after now and at most one
// interval away, the same for every sampler of the process with the same
// intervals.
func TestSampleWaitOnGrid(t *testing.T) {
	const iv, ping = 200 * time.Millisecond, 2 * time.Millisecond
	phase := int64(ping / 2) // gcd(200 ms, 2 ms) / 2
	for _, now := range []int64{0, 1, phase - 1, phase, phase + 1, int64(iv) + phase, 7*int64(iv) + 12345, 1e12 + 3} {
		d := sampleWait(now, iv, ping)
		at := now + int64(d)
		if d <= 0 || d > iv {
			t.Errorf("now %d: wait %v, want in (0, %v]", now, d, iv)
		}
		if (at-phase)%int64(iv) != 0 {
			t.Errorf("now %d: wakes at %d, off the grid (%d + k*%d)", now, at, phase, int64(iv))
		}
		if now >= phase && (at-phase)/int64(iv) != (now-phase)/int64(iv)+1 {
			t.Errorf("now %d: wakes at %d, not the first grid point after now", now, at)
		}
	}
	if d := sampleWait(5, iv, 0); d != iv-5 {
		t.Errorf("no probe: wait %v, want %v", d, iv-5)
	}
}

// TestSamplesMissThePINGs: for the defaults, a fleet's budgets and odd
// intervals, 1,000 samples in a row each stay at least half the greatest
// common divisor of the intervals from every PING of the probe's grid.
func TestSamplesMissThePINGs(t *testing.T) {
	for _, c := range []struct {
		iv, ping time.Duration
		apart    time.Duration
	}{
		{200 * time.Millisecond, 2 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 6 * time.Millisecond, time.Millisecond},
		{200 * time.Millisecond, 16 * time.Millisecond, 4 * time.Millisecond},
		{200 * time.Millisecond, 7 * time.Millisecond, 500 * time.Microsecond},
		{300 * time.Millisecond, 200 * time.Millisecond, 50 * time.Millisecond},
		{10 * time.Millisecond, 1500 * time.Microsecond, 250 * time.Microsecond},
	} {
		now := int64(12345)
		for range 1000 {
			now += int64(sampleWait(now, c.iv, c.ping))
			off := now % int64(c.ping)
			dist := min(off, int64(c.ping)-off)
			if dist < int64(c.apart) {
				t.Fatalf("interval %v, PING every %v: a sample at %d is %v from a PING, want at least %v",
					c.iv, c.ping, now, time.Duration(dist), c.apart)
			}
		}
	}
}
