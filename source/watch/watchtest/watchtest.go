// Package watchtest runs a watcher against a real server (started with
// servertest) for the tests of packages built on it. It is apart from
// sourcetest so that the watcher's own tests can use sourcetest, which
// then does not import the watcher.
package watchtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// Connect connects a watcher (with a clock of its own and cfg) to the
// server at addr, failing the test if it cannot within ctx, and closes it
// when the test ends. It returns the clock too, whose epoch a recording's
// header carries, and the identity the server answered with.
func Connect(t testing.TB, ctx context.Context, addr string, cfg watch.Config) (*watch.Watcher, *source.Clock, source.Identity) {
	t.Helper()
	ep := sourcetest.Endpoint(t, addr)
	clock := source.NewClock()
	w := watch.New(ep.Node(), ep, clock, cfg)
	t.Cleanup(func() { w.Close() })
	id, err := w.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return w, clock, id
}

// A Save is a server whose saves take long enough to be sampled while
// they run, and a watcher connected to it: where the tests of what a
// real save looks like start.
type Save struct {
	Server *server.Server
	// Admin is a client of the server's apart from the watcher, to read
	// what the server itself says.
	Admin *redis.Client
	// Ctx ends after the timeout SlowSave was given, or with the test.
	Ctx      context.Context
	Watcher  *watch.Watcher
	Clock    *source.Clock
	Identity source.Identity
}

// SlowSave starts a server holding keys keys of size bytes that saves
// each in delayUS microseconds (servertest.StartSlowSave), and connects a
// watcher with cfg to it (Connect) within a context that ends after
// timeout or when the test does. The watcher does not run yet: the test
// runs it as it needs (Run, RunBGSAVE).
func SlowSave(t testing.TB, keys, size, delayUS int, timeout time.Duration, cfg watch.Config) *Save {
	t.Helper()
	srv, adm := servertest.StartSlowSave(t, keys, size, delayUS)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	w, clock, id := Connect(t, ctx, srv.Addr, cfg)
	return &Save{Server: srv, Admin: adm, Ctx: ctx, Watcher: w, Clock: clock, Identity: id}
}

// Run runs w until the test ends, its events sent to the channel returned
// (of capacity buffer; a full channel holds the watcher back rather than
// losing an event). At the test's end the run is cancelled and waited for
// and w is closed.
func Run(t testing.TB, w *watch.Watcher, buffer int) <-chan source.Event {
	events := make(chan source.Event, buffer)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, func(ev source.Event) {
			select {
			case events <- ev:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		w.Close()
	})
	return events
}

// RunBGSAVE runs w through one save, as a recording of it is made: every
// event goes to emit, on the watcher's goroutine as Run's callback does;
// after the first sample the server is asked for a BGSAVE, and once the
// save's report has been emitted the run is stopped and waited for. So
// emit is done with when RunBGSAVE returns the report, and what it kept
// needs no lock. It fails the test if no sample comes before ctx ends, if
// the BGSAVE fails, or if the save has not ended when ctx ends or within
// has passed since the BGSAVE.
func RunBGSAVE(t testing.TB, ctx context.Context, w *watch.Watcher, within time.Duration, emit func(source.Event)) source.SaveReport {
	t.Helper()
	return RunSave(t, ctx, w, within, emit, "BGSAVE")
}

// RunSave is RunBGSAVE with the command that starts the save: BGSAVE or
// BGREWRITEAOF.
func RunSave(t testing.TB, ctx context.Context, w *watch.Watcher, within time.Duration, emit func(source.Event), command string) source.SaveReport {
	t.Helper()
	var (
		first = make(chan struct{})
		once  sync.Once
		ended = make(chan source.SaveReport, 1)
	)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() {
		w.Run(runCtx, func(ev source.Event) {
			emit(ev)
			if ev.Kind == source.EventSample {
				once.Do(func() { close(first) })
			}
			if ev.Kind == source.EventSaveEnded && ev.Report != nil {
				select {
				case ended <- *ev.Report:
				default:
				}
			}
		})
	})
	select {
	case <-first:
	case <-ctx.Done():
		t.Fatal("no sample")
	}
	if res := w.Do(ctx, command); !res.OK() {
		t.Fatalf("%s: %s", command, res.Err)
	}
	var r source.SaveReport
	select {
	case r = <-ended:
	case <-time.After(within):
		t.Fatalf("no save ended within %v of %s", within, command)
	case <-ctx.Done():
		t.Fatalf("no save ended before the test's time ran out (%v)", ctx.Err())
	}
	return r
}
