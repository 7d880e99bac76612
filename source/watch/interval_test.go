package watch

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

// TestSetIntervalLive changes a running watcher's INFO sampling interval,
// both ways, on a real server: coarser, the samples come about a second
// apart; finer, the next one comes at once rather than at the coarse
// interval's next tick, and the ones after it close together. Neither
// change reconnects.
func TestSetIntervalLive(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	ep := sourcetest.Endpoint(t, srv.Addr)
	const fine, coarse = 50 * time.Millisecond, time.Second
	w := New(ep.Node(), ep, nil, Config{Interval: fine})
	defer w.Close()
	var (
		mu       sync.Mutex
		at       []time.Time // when each sample reached emit
		connects int
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Go(func() {
		w.Run(ctx, func(ev source.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Kind {
			case source.EventSample:
				at = append(at, time.Now())
			case source.EventConnected:
				connects++
			}
		})
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(at) }
	waitSamples := func(n int, what string) {
		servertest.WaitFor(t, 30*time.Second, what, func() bool { return count() >= n })
	}
	// gaps are the times between the samples from the i-th on.
	gaps := func(i int) []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		var g []time.Duration
		for j := i + 1; j < len(at); j++ {
			g = append(g, at[j].Sub(at[j-1]))
		}
		return g
	}
	waitSamples(3, "samples at the fine interval")

	w.SetInterval(coarse)
	if got := w.Interval(); got != coarse {
		t.Fatalf("Interval() %s after SetInterval(%s)", got, coarse)
	}
	// The sample in flight, if any, and the first one on the coarse grid
	// may come sooner; the three after it are a second apart (20 of the
	// fine interval: a loaded machine delays a sample, it does not bring
	// twenty in a second).
	from := count() + 1
	waitSamples(from+4, "samples at the coarse interval")
	for _, g := range gaps(from)[:3] {
		if g < coarse*7/10 {
			t.Errorf("samples %s apart at an interval of %s", g, coarse)
		}
	}

	mu.Lock()
	last := at[len(at)-1]
	mu.Unlock()
	w.SetInterval(fine)
	changed := time.Now()
	n := count()
	waitSamples(n+1, "the first sample at the fine interval")
	mu.Lock()
	first := at[n]
	mu.Unlock()
	// The coarse grid's next tick is a second after the last sample:
	// the fine one must not wait for it.
	if next := last.Add(coarse); !first.Before(next.Add(-coarse / 4)) {
		t.Errorf("the first sample after SetInterval(%s) came %s after it, %s after the last: it waited for the coarse tick",
			fine, first.Sub(changed), first.Sub(last))
	}
	waitSamples(n+11, "ten samples at the fine interval")
	fast := 0
	for _, g := range gaps(n)[:10] {
		if g < coarse/2 {
			fast++
		}
	}
	if fast < 8 {
		t.Errorf("only %d of 10 samples came less than %s apart at an interval of %s: %v", fast, coarse/2, fine, gaps(n)[:10])
	}
	mu.Lock()
	defer mu.Unlock()
	if connects != 1 {
		t.Errorf("%d connects: changing the interval must not reconnect", connects)
	}
}
