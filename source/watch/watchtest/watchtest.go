// Package watchtest runs a watcher against a real server (started with
// servertest) for the tests of packages built on it. It is apart from
// sourcetest so that the watcher's own tests can use sourcetest, which
// then does not import the watcher.
package watchtest

import (
	"context"
	"testing"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// Watch connects a watcher (with a clock of its own and cfg) to the
// server at addr, failing the test if it cannot within ctx, and runs it
// until the test ends (Run).
func Watch(t testing.TB, ctx context.Context, addr string, cfg watch.Config, buffer int) (*watch.Watcher, <-chan source.Event) {
	t.Helper()
	ep := sourcetest.Endpoint(t, addr)
	w := watch.New(ep.Node(), ep, source.NewClock(), cfg)
	if _, err := w.Connect(ctx); err != nil {
		w.Close()
		t.Fatal(err)
	}
	return w, Run(t, w, buffer)
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
