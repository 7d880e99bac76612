package ui

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
	"github.com/vkwatch/vkwatch/ui/plain"
	"github.com/vkwatch/vkwatch/ui/text"
)

// TestRealServerSaveFlow is the whole product in one flow: a real
// redis-server watched by a real watch.Watcher, its events fed to the
// program as the wiring feeds them, `b` pressed, BGSAVE sent through the
// watcher, the progress bar seen mid-save and the end-of-save summary drawn
// with what the server itself reports afterwards.
func TestRealServerSaveFlow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ep, w, rc := watchReal(t, ctx)
	tm, sc, wait := programOn(t, ctx, w, ep)
	tm.Type("b")
	sc.waitFor(t, tm, "Background saving started")
	sc.waitFor(t, tm, "▶ BGSAVE fork")
	reports := sc.reportsAfterSave(t, tm, cancel, wait)
	if len(reports) != 1 {
		t.Fatalf("want one report, got %d", len(reports))
	}
	rep := reports[0]
	info, err := rc.Info(context.Background(), "persistence").Result()
	if err != nil {
		t.Fatal(err)
	}
	parsed := source.ParseInfo(info)
	if rep.Kind != source.SaveFork || rep.Status != "ok" {
		t.Errorf("report kind %q status %q, want fork/ok", rep.Kind, rep.Status)
	}
	if !rep.COW.OK || rep.COW.V != parsed.RDBLastCOW.V {
		t.Errorf("report COW %+v, server's rdb_last_cow_size %+v", rep.COW, parsed.RDBLastCOW)
	}
	if !rep.ServerSeconds.OK || rep.ServerSeconds.V != parsed.RDBLastTime.V {
		t.Errorf("report server seconds %+v, server's rdb_last_bgsave_time_sec %+v", rep.ServerSeconds, parsed.RDBLastTime)
	}
	if !strings.Contains(string(sc.seen), "keys ") {
		t.Errorf("progress line with keys processed never drawn")
	}
}

// waitForLong is waitFor with a longer deadline, for a whole save.
func (sc *screen) waitForLong(t *testing.T, tm *teatest.TestModel, s string, d time.Duration) {
	t.Helper()
	var last []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		last = b
		return strings.Contains(string(sc.seen)+string(b), s)
	}, teatest.WithDuration(d), teatest.WithCheckInterval(50*time.Millisecond))
	sc.seen = append(sc.seen, last...)
}

// feedUntil feeds *m the watcher's events until one satisfies cond,
// failing the test with the screen when ctx ends first.
func feedUntil(t *testing.T, ctx context.Context, m *Model, events <-chan source.Event, what string, cond func(source.Event) bool) {
	t.Helper()
	for {
		select {
		case ev := <-events:
			nm, _ := m.Update(EventMsg(ev))
			*m = nm.(Model)
			if cond(ev) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no %s:\n%s", what, plainView(*m))
		}
	}
}

// watchReal starts a real server whose BGSAVE of 20k keys takes about 2 s
// (rdb-key-save-delay 100 µs a key, so it is sampled mid-save) and a
// connected watcher of it (see startRealWatch).
func watchReal(t *testing.T, ctx context.Context) (source.Endpoint, *watch.Watcher, *redis.Client) {
	t.Helper()
	x := startRealWatch(t, ctx, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	return x.ep, x.w, x.rc
}

// realWatch is a real server holding 20k keys of 100 bytes, the test's
// own client of it (rc) and a connected watcher of it sampling every
// 100 ms; all end with the test.
type realWatch struct {
	srv *server.Server
	rc  *redis.Client
	ep  source.Endpoint
	w   *watch.Watcher
}

func startRealWatch(t *testing.T, ctx context.Context, opts server.Options) *realWatch {
	t.Helper()
	x := startRealServer(t, opts)
	x.watch(t, ctx, watch.Config{Interval: 100 * time.Millisecond})
	return x
}

// startRealServer is startRealWatch without the watcher, for a test that
// watches with a configuration of its own (x.watch).
func startRealServer(t *testing.T, opts server.Options) *realWatch {
	t.Helper()
	x := &realWatch{srv: servertest.Start(t, opts)}
	x.rc = servertest.Client(t, x.srv)
	servertest.Populate(t, x.rc, 20000, "key", 100)
	return x
}

// watch connects a watcher of x's server with cfg (watchtest.Connect: it
// is closed when the test ends), and sets x.ep to its endpoint.
func (x *realWatch) watch(t *testing.T, ctx context.Context, cfg watch.Config) {
	t.Helper()
	x.w, _, _ = watchtest.Connect(t, ctx, x.srv.Addr, cfg)
	x.ep = x.w.Endpoint()
}

// sendVia is a Config.Send that sends through w.
func sendVia(ctx context.Context, w *watch.Watcher) func(source.NodeID, ...string) {
	return func(_ source.NodeID, args ...string) { w.Do(ctx, args...) }
}

// run runs x's watcher until the test ends (watchtest.Run), and with
// writers writeUntil on a client of its own. feed feeds *m the watcher's
// events until one satisfies cond (feedUntil).
func (x *realWatch) run(t *testing.T, ctx context.Context, m *Model, writers bool) (feed func(what string, cond func(source.Event) bool)) {
	t.Helper()
	events := watchtest.Run(t, x.w, 4096)
	if writers {
		wc := servertest.Client(t, x.srv)
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { writeUntil(wctx, wc) })
		t.Cleanup(func() { stop(); wg.Wait() })
	}
	return func(what string, cond func(source.Event) bool) {
		t.Helper()
		feedUntil(t, ctx, m, events, what, cond)
	}
}

// programOn runs the UI of the one server w watches in a teatest program,
// fed by w's events as the wiring feeds them, its commands sent through
// w, and waits until it has drawn "connected" (sc holds what it drew).
// wait waits for the watcher to stop once ctx is cancelled.
func programOn(t *testing.T, ctx context.Context, w *watch.Watcher, ep source.Endpoint) (tm *teatest.TestModel, sc *screen, wait func()) {
	t.Helper()
	tm = teatest.NewTestModel(t, New(Config{
		Nodes: nodes(ep.String()),
		Send:  sendVia(ctx, w),
	}), teatest.WithInitialTermSize(140, 45))
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(ctx, func(ev source.Event) { tm.Send(EventMsg(ev)) }) })
	sc = &screen{}
	sc.waitFor(t, tm, "connected")
	return tm, sc, wg.Wait
}

// reportsAfterSave waits for the end-of-save summary, quits the program,
// stops its watcher (cancel, then wait) and returns the model's reports.
func (sc *screen) reportsAfterSave(t *testing.T, tm *teatest.TestModel, cancel context.CancelFunc, wait func()) []source.SaveReport {
	t.Helper()
	sc.waitForLong(t, tm, "last save BGSAVE fork by ", 60*time.Second)
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	cancel()
	wait()
	return tm.FinalModel(t).(Model).Reports()
}

// TestRealServerCostCurve saves a real server twice through the model's
// own keys and a real watcher, then opens the cost view: both saves are
// on the plot, each labelled with the server, its kind, who started it
// and when, and each curve ends in its digit.
func TestRealServerCostCurve(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	x := startRealWatch(t, ctx, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	ep := x.ep
	m := sized(New(Config{Nodes: nodes(ep.String()), Send: sendVia(ctx, x.w)}), 160, 45)
	// until feeds the model the watcher's events until one satisfies cond.
	until := x.run(t, ctx, &m, false)
	until("first sample", func(ev source.Event) bool { return ev.Kind == source.EventSample })
	for i := range 2 {
		var cmd tea.Cmd
		m, cmd = press(m, "b")
		run(t, cmd) // sends BGSAVE through the watcher
		until(fmt.Sprintf("end of save %d", i+1), func(ev source.Event) bool { return ev.Kind == source.EventSaveEnded })
	}
	m, _ = press(m, "c")
	v := plainView(m)
	for i := range 2 {
		re := regexp.MustCompile(fmt.Sprintf(`%d ━━ %s BGSAVE fork by vkwatch \d\d:\d\d:\d\d ok peak \S+`, i+1, regexp.QuoteMeta(ep.String())))
		if !re.MatchString(v) {
			t.Errorf("no legend line for save %d (%s):\n%s", i+1, re, v)
		}
	}
	var cells strings.Builder
	for _, l := range strings.Split(v, "\n") {
		if _, after, ok := strings.Cut(strings.Replace(l, "┤", "│", 1), "│"); ok {
			cells.WriteString(after)
		}
	}
	for _, d := range []string{"1", "2"} {
		if strings.Count(cells.String(), d) != 1 {
			t.Errorf("curve %s not labelled once on the plot:\n%s", d, v)
		}
	}
	if reps := m.Reports(); len(reps) != 2 || reps[0].Trigger.Kind != source.TriggerUser {
		t.Errorf("reports %+v", reps)
	}
}

// TestRealServerCancelRefused: Redis 7.0 has no BGSAVE CANCEL (Valkey 8.1
// added it). x, x during a real save sends it through a real watcher; the
// footer shows the server's own error, the save goes on, and its report
// says ok, not cancelled.
func TestRealServerCancelRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ep, w, rc := watchReal(t, ctx)
	tm, sc, wait := programOn(t, ctx, w, ep)
	tm.Type("b")
	sc.waitFor(t, tm, "▶ BGSAVE fork")
	tm.Type("x")
	sc.waitFor(t, tm, ep.String()+" cannot cancel a save: BGSAVE CANCEL needs Valkey 8.1 or later (this is redis ")
	if p := source.ParseInfo(rc.Info(ctx, "persistence").Val()); p.RDBInProgress.V != 1 {
		t.Errorf("the save stopped: rdb_bgsave_in_progress %+v", p.RDBInProgress)
	}
	// Nothing was sent: the server counted one BGSAVE, b's.
	if stats := rc.Info(ctx, "commandstats").Val(); !strings.Contains(stats, "cmdstat_bgsave:calls=1,") {
		t.Errorf("BGSAVE calls: want 1 (b's, no CANCEL sent):\n%s", stats)
	}
	reports := sc.reportsAfterSave(t, tm, cancel, wait)
	if len(reports) != 1 || reports[0].Status != "ok" {
		t.Fatalf("reports %+v, want one ok save", reports)
	}
}

// TestRealShortSaveFigures: a real save of a small dataset, far shorter
// than a second, watched as the binary watches it (INFO and /proc),
// sampled every second (the save runs between two samples) and every
// 50 ms (seen once or twice, its child maybe gone when /proc looks). Its
// last-save block has a figure wherever an instrument measured the save,
// the server's own where the samples saw less: no n/a.
func TestRealShortSaveFigures(t *testing.T) {
	pr, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, ivl := range []time.Duration{time.Second, 50 * time.Millisecond} {
		t.Run(ivl.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			x := startRealServer(t, server.Options{})
			x.watch(t, ctx, watch.Config{Interval: ivl, Proc: pr.Read})
			events := watchtest.Run(t, x.w, 4096)
			next := func(what string, cond func(source.Event) bool) source.Event {
				t.Helper()
				ev, ok := servertest.Receive(events, 30*time.Second, cond)
				if !ok {
					t.Fatalf("no %s", what)
				}
				return ev
			}
			for range 2 { // ops/s before the save: two samples with a rate
				next("a sample with ops/s", func(ev source.Event) bool { return ev.Kind == source.EventSample && ev.Sample.OpsPerSec.OK })
			}
			if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
				t.Fatal(r.Err)
			}
			rep := next("the save's report", func(ev source.Event) bool { return ev.Kind == source.EventSaveEnded }).Report
			block := strings.Join(plain.ReportLines(rep), "\n")
			t.Logf("%s (observed %s, up to: %v)", block, rep.Observed, rep.ObservedUpTo)
			if v, ok := rep.ServerSeconds.Get(); !ok || v > 1 {
				t.Fatalf("rdb_last_bgsave_time_sec %+v: not the short save this test is about", rep.ServerSeconds)
			}
			if strings.Contains(block, text.NA) {
				t.Errorf("a figure n/a in the last-save block of a short save:\n%s", block)
			}
		})
	}
}
