package ui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// watchedRun watches addrs as the monitor does (one fleet, one clock,
// INFO every 100 ms, /proc where the server is local) and keeps their
// events in a statusRun; until takes events until one satisfies cond.
type watchedRun struct {
	run    statusRun
	fleet  *fleet.Fleet
	events chan source.Event
}

func watchRun(t *testing.T, ctx context.Context, name string, addrs ...string) *watchedRun {
	t.Helper()
	pr, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	members := make([]fleet.Member, len(addrs))
	w := &watchedRun{run: statusRun{name: name, shown: len(addrs) - 1}, events: make(chan source.Event, 1<<16)}
	for i, a := range addrs {
		ep := sourcetest.Endpoint(t, a)
		members[i] = fleet.Member{ID: ep.Node(), Endpoint: ep}
		w.run.nodes = append(w.run.nodes, Node{ID: ep.Node(), Addr: ep.String()})
	}
	w.fleet = fleet.NewList(members, fleet.Config{Watch: watch.Config{Interval: 100 * time.Millisecond, Proc: pr.Read}})
	t.Cleanup(func() { w.fleet.Close() })
	if _, err := w.fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { w.fleet.Run(runCtx, func(ev source.Event) { w.events <- ev }) })
	t.Cleanup(func() { stop(); wg.Wait() })
	return w
}

// until keeps the run's events until one satisfies cond.
func (w *watchedRun) until(t *testing.T, what string, cond func(source.Event) bool) {
	t.Helper()
	_, ok := servertest.Receive(w.events, time.Minute, func(ev source.Event) bool {
		w.run.events = append(w.run.events, ev)
		return cond(ev)
	})
	if !ok {
		t.Fatalf("%s: no %s in a minute (%d events)", w.run.name, what, len(w.run.events))
	}
}

// sampled waits until every server has given n samples with a rate of
// commands (ops/s before the save).
func (w *watchedRun) sampled(t *testing.T, n int) {
	t.Helper()
	seen := map[source.NodeID]int{}
	w.until(t, "samples with ops/s", func(ev source.Event) bool {
		if ev.Kind == source.EventSample && ev.Sample.OpsPerSec.OK {
			seen[ev.Node]++
		}
		for _, nd := range w.run.nodes {
			if seen[nd.ID] < n {
				return false
			}
		}
		return true
	})
}

// save sends BGSAVE to every server, as B does.
func (w *watchedRun) save(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, nd := range w.run.nodes {
		if r := w.fleet.Do(ctx, nd.ID, "BGSAVE"); !r.OK() {
			t.Fatalf("BGSAVE on %s: %s", nd.Addr, r.Err)
		}
	}
}

// ended waits until every server's save ended and a sample after it came.
func (w *watchedRun) ended(t *testing.T) {
	t.Helper()
	ended, after := map[source.NodeID]bool{}, map[source.NodeID]bool{}
	w.until(t, "every save's end and a sample after it", func(ev source.Event) bool {
		switch {
		case ev.Kind == source.EventSaveEnded:
			ended[ev.Node] = true
		case ev.Kind == source.EventSample && ended[ev.Node] && ev.Sample.Save == nil:
			after[ev.Node] = true
		}
		return len(after) == len(w.run.nodes)
	})
}

// TestStatusBlocksRealFork: two real servers save by fork at once, one
// idle, one written to, watched as the monitor watches them. Every frame
// before, during and after, at 200x50, 80x24 and 120x40, keeps every
// status line whole, shows every figure measured where there is room and
// the most important ones where there is not (checkStatus).
func TestStatusBlocksRealFork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// 20,000 keys at 100 µs each: saves of about 2 s, seen at several
	// percentages.
	srvs := servertest.StartMany(t, 2, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	for _, s := range srvs {
		servertest.Populate(t, servertest.Client(t, s), 20000, "key", 100)
	}
	w := watchRun(t, ctx, "fork", srvs[0].Addr, srvs[1].Addr)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wc := servertest.Client(t, srvs[1])
	wg.Go(func() { writeUntil(wctx, wc) })
	defer func() { stop(); wg.Wait() }()
	w.sampled(t, 3)
	w.save(t, ctx)
	w.ended(t)
	stop()
	keepRun(t, &w.run)
	w.run.frames(t, func(string, Model) {})
}

// TestStatusBlocksStandInForkless: the Valkey 9.2 stand-in (no 9.2 server
// can be built here) saves forkless, holding up two writers, beside a
// stand-in saving by fork with writes during it; each frame is checked
// as the real fork save's are. The stand-in's saves move only when the
// test moves them: each step is waited for on the events.
func TestStatusBlocksStandInForkless(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fk := standin.Start(t, standin.Options{ForklessInfra: true})
	fl := standin.Start(t, standin.Options{ForklessInfra: true, Method: "forkless"})
	for _, s := range []*standin.Server{fk, fl} {
		s.Load("key:", 4000, 600)
		s.Load("small:", 10, 100)
	}
	w := watchRun(t, ctx, "forkless", fk.Addr, fl.Addr)
	flID := w.run.nodes[1].ID
	w.sampled(t, 3)
	w.save(t, ctx)
	w.until(t, "the forkless save before its first key", func(ev source.Event) bool {
		return ev.Node == flID && ev.Kind == source.EventSample && ev.Sample.Save != nil && ev.Sample.Save.Phase != ""
	})
	// The fork save copies the pages of 50 values written during it.
	fc, lc := fk.Client(t), fl.Client(t)
	for i := range 50 {
		if err := fc.Set(ctx, "key:"+strconv.Itoa(i), strings.Repeat("w", 600), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The forkless save clones small values and holds up the writers of
	// large ones its thread has not written yet.
	for i := range 10 {
		if err := lc.Set(ctx, "small:"+strconv.Itoa(i), strings.Repeat("r", 100), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	writes := make(chan error, 2)
	for _, k := range []string{"key:3000", "key:3999"} {
		c := fl.Client(t)
		go func() { writes <- c.Set(ctx, k, "new", 0).Err() }()
	}
	fl.Wait(t, "two writers blocked by the save thread", func(v standin.View) bool { return v.Blocked == 2 })
	fk.Step(2000)
	fl.Step(1500)
	fk.Advance(time.Second)
	fl.Advance(time.Second)
	w.until(t, "the forkless save's keys and ETA", func(ev source.Event) bool {
		s := ev.Sample
		return ev.Node == flID && ev.Kind == source.EventSample && s.Save != nil && s.Save.Processed.V >= 1500 && s.Save.ETA.OK &&
			s.Info.BlockedClients.V == 2
	})
	fk.Step(fk.View().Keys)
	fl.Step(fl.View().Keys)
	for range 2 {
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
	}
	fk.Advance(2 * time.Second)
	fl.Advance(2 * time.Second)
	fk.Finish()
	fl.Finish()
	w.ended(t)
	keepRun(t, &w.run)
	w.run.frames(t, func(string, Model) {})
}
