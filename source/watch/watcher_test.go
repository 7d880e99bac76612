package watch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
		switch ev.Kind {
		case source.EventSample:
			samples = append(samples, ev.Sample)
		case source.EventSpike:
			// A PING past the spike rule's bar (2 ms, early in the
			// minute): the -race build on a loaded machine makes some;
			// the spike tests are about them, this one about samples.
		default:
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
// (the sampler's connection, of INFO and CONFIG GET, and Do's), and the
// user's command sent with Do is not; a command
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
			t.Errorf("%s: the watcher counted %d commands of its own (%v), the server ran %d besides the user's SET (config %+v)",
				ep, own, w.ownByName.by, ran, cfg)
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
