package fleet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

func TestColdInterval(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		nodes, hot int
		want       time.Duration
	}{
		{100, 0, 100 * ms}, // the budget alone
		{100, 1, 198 * ms}, // 99 nodes share 500/s
		{30, 1, 58 * ms},
		{2, 1, 2 * ms},      // never under 2 ms
		{100, 2, 392 * ms},  // 98 share the quarter left: 250/s
		{100, 10, 360 * ms}, // 90 share 250/s
	} {
		if got := coldInterval(c.nodes, c.hot, 0); got != c.want {
			t.Errorf("coldInterval(%d nodes, %d hot) = %s, want %s", c.nodes, c.hot, got, c.want)
		}
	}
}

// TestAttentionFollowsTheSave: in a fleet of 32 real servers, the one a
// BGSAVE is sent to is probed every 2 ms from the send until its save has
// ended, while the other 31 share what is left of the budget; the
// topology says so, and the save's report says its PINGs were 2 ms apart.
func TestAttentionFollowsTheSave(t *testing.T) {
	const n = 32
	srvs := servertest.StartMany(t, n, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	saver := srvs[n/2]
	adm := servertest.Client(t, saver)
	// 20,000 keys at 100 us: a save of about 2 s.
	servertest.Populate(t, adm, 20000, "key", 100)
	members := make([]Member, n)
	for i, s := range srvs {
		ep := sourcetest.Endpoint(t, s.Addr)
		members[i] = Member{ID: ep.Node(), Endpoint: ep}
	}
	saverID := members[n/2].ID
	f := NewList(members, Config{Watch: watch.Config{Interval: 200 * time.Millisecond}})
	defer f.Close()
	top, err := f.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := PingInterval(n, 0); top.PingInterval != want || len(top.Attention) != 0 {
		t.Fatalf("at start: PING every %s with attention %v, want %s and none", top.PingInterval, top.Attention, want)
	}
	var s sink
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	defer func() { stop(); <-done }()
	go func() { defer close(done); f.Run(runCtx, s.emit) }()
	servertest.WaitFor(t, time.Minute, "a sample of every node", func() bool {
		seen := map[source.NodeID]bool{}
		for _, ev := range s.events() {
			if ev.Kind == source.EventSample {
				seen[ev.Node] = true
			}
		}
		return len(seen) == n
	})

	if r := f.Do(ctx, saverID, "BGSAVE"); !r.OK() {
		t.Fatalf("BGSAVE: %s", r.Err)
	}
	var rep *source.SaveReport
	servertest.WaitFor(t, time.Minute, "the save to end", func() bool {
		for _, ev := range s.events() {
			if ev.Kind == source.EventSaveEnded && ev.Node == saverID {
				rep = ev.Report
				return true
			}
		}
		return false
	})
	// The saver's samples while it saved: each says its PINGs were 2 ms
	// apart, and together they hold about one PING per 2 ms of their span
	// (the test asks for one per 15 ms on average, four times finer than the coarse
	// interval's one per 62 ms, so that a machine at load 20 passes); the
	// others' samples say the coarse interval.
	cold := coldInterval(n, 1, 0)
	var during, others int
	var pings int64
	var span time.Duration
	saving := false
	prev := map[source.NodeID]time.Duration{}
	// An other node's first sample after the save started may span the
	// moment attention moved (its interval began before): its PINGs had
	// both intervals, and it says the one it began with. Later ones must
	// say the coarse one.
	straddled := map[source.NodeID]bool{}
	for _, ev := range s.events() {
		if ev.Kind != source.EventSample {
			switch {
			case ev.Kind == source.EventSaveStarted && ev.Node == saverID:
				saving = true
				clear(straddled)
			case ev.Kind == source.EventSaveEnded && ev.Node == saverID:
				saving = false
			}
			continue
		}
		last, ok := prev[ev.Node]
		prev[ev.Node] = ev.Offset
		if ev.Node == saverID && ev.Sample.Save == nil {
			// The saver's first sample with no save running is when the
			// fleet lets its attention go (attend): the other nodes'
			// samples after it may come before its EventSaveEnded, from
			// their own watchers, at the interval of no save.
			saving = false
		}
		switch {
		case saving && ev.Node == saverID && ev.Sample.Save != nil && ok:
			during++
			pings += ev.Sample.Ping.Count
			span += ev.Offset - last
			if p := ev.Sample.Ping; p.Interval != MinPingInterval {
				t.Errorf("saver's sample during the save: PING interval %s, want 2ms", p.Interval)
			}
		case saving && ev.Node != saverID && !straddled[ev.Node]:
			straddled[ev.Node] = true
		case saving && ev.Node != saverID:
			others++
			if p := ev.Sample.Ping; p.Interval != cold {
				t.Errorf("%s while another node saves: PING interval %s, want %s", ev.Node, p.Interval, cold)
			}
		}
	}
	if during < 3 {
		t.Fatalf("only %d samples saw the save running", during)
	}
	if others == 0 {
		t.Error("no other node's sample during the save")
	}
	mean := span / time.Duration(max(pings, 1))
	t.Logf("saver: %d PINGs in %s of samples during the save: one per %s (the others: every %s)", pings, span, mean, cold)
	if mean > 15*time.Millisecond {
		t.Errorf("saver's PINGs during the save came one per %s: not 2 ms apart", mean)
	}
	if rep.PingDuring.Interval != MinPingInterval {
		t.Errorf("the report's PINGs were %s apart, want 2ms", rep.PingDuring.Interval)
	}
	// The topology in force during the save named the saver.
	var top2 source.Topology
	for _, ev := range s.events() {
		if ev.Kind == source.EventTopology {
			top2 = *ev.Topology
		}
		if ev.Kind == source.EventSaveStarted && ev.Node == saverID {
			break
		}
	}
	if got := top2.IntervalOf(saverID); got != MinPingInterval || top2.PingInterval != cold {
		t.Errorf("topology when the save started: saver at %s, the rest at %s; want 2ms and %s (%+v)", got, top2.PingInterval, cold, top2.Attention)
	}
	// Once it has ended, everyone is back on the budget's interval.
	servertest.WaitFor(t, 10*time.Second, "the saver to leave attention", func() bool {
		t := f.Topology()
		return len(t.Attention) == 0 && t.PingInterval == PingInterval(n, 0)
	})
}

// TestIdleSamplingFollowsTheSave: with an IdleInterval, two real servers
// at rest are sampled a second apart; a BGSAVE sent through the fleet has
// its node sampled every Interval from before it forks until the save
// ends, the other node staying at a second, and then the saver goes back
// to rest. With the budget's PINGs and with a --ping-interval, which the
// samples' attention must leave alone.
func TestIdleSamplingFollowsTheSave(t *testing.T) {
	for _, fixedPing := range []time.Duration{0, 10 * time.Millisecond} {
		t.Run(fmt.Sprintf("ping-interval=%s", fixedPing), func(t *testing.T) {
			idleSamplingFollowsTheSave(t, fixedPing)
		})
	}
}

func idleSamplingFollowsTheSave(t *testing.T, fixedPing time.Duration) {
	const fine, rest = 50 * time.Millisecond, time.Second
	srvs := servertest.StartMany(t, 2, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// 20,000 keys at 100 us: a save of about 2 s.
	servertest.Populate(t, servertest.Client(t, srvs[0]), 20000, "key", 100)
	members := make([]Member, len(srvs))
	for i, s := range srvs {
		ep := sourcetest.Endpoint(t, s.Addr)
		members[i] = Member{ID: ep.Node(), Endpoint: ep}
	}
	saver, other := members[0].ID, members[1].ID
	f := NewList(members, Config{Watch: watch.Config{Interval: fine, PingInterval: fixedPing}, IdleInterval: rest})
	defer f.Close()
	top, err := f.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if top.SampleInterval != rest || top.AttentionSampleInterval != fine || len(top.Attention) != 0 {
		t.Fatalf("at start: samples every %s, %s in attention, attention %v; want %s, %s and none",
			top.SampleInterval, top.AttentionSampleInterval, top.Attention, rest, fine)
	}
	var s sink
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	defer func() { stop(); <-done }()
	go func() { defer close(done); f.Run(runCtx, s.emit) }()
	samplesOf := func(node source.NodeID) int {
		n := 0
		for _, ev := range s.events() {
			if ev.Kind == source.EventSample && ev.Node == node {
				n++
			}
		}
		return n
	}
	servertest.WaitFor(t, time.Minute, "three samples of each node", func() bool {
		return samplesOf(saver) >= 3 && samplesOf(other) >= 3
	})
	if r := f.Do(ctx, saver, "BGSAVE"); !r.OK() {
		t.Fatalf("BGSAVE: %s", r.Err)
	}
	servertest.WaitFor(t, time.Minute, "the save to end", func() bool {
		for _, ev := range s.events() {
			if ev.Kind == source.EventSaveEnded && ev.Node == saver {
				return true
			}
		}
		return false
	})

	// The samples from the saver's first sample seeing the save to its
	// first seeing none: the saver's close together, the other's a second
	// apart (its first one in the save may have been due before).
	var saverAt, otherAt []time.Duration
	saving := false
	for _, ev := range s.events() {
		if ev.Kind != source.EventSample {
			continue
		}
		if ev.Node == saver {
			saving = ev.Sample.Save != nil
			if saving {
				saverAt = append(saverAt, ev.Offset)
				if p := ev.Sample.Ping.Interval; fixedPing > 0 && p != fixedPing {
					t.Errorf("saver's PINGs %s apart during the save: the --ping-interval %s must hold", p, fixedPing)
				}
			}
			if !saving && len(saverAt) > 0 {
				break
			}
		} else if saving {
			otherAt = append(otherAt, ev.Offset)
		}
	}
	if len(saverAt) < 8 {
		t.Fatalf("only %d of the saver's samples saw the save running (a 2 s save sampled every %s)", len(saverAt), fine)
	}
	mean := (saverAt[len(saverAt)-1] - saverAt[0]) / time.Duration(len(saverAt)-1)
	t.Logf("saver: %d samples during the save, one per %s; the other: %d", len(saverAt), mean, len(otherAt))
	if mean > rest/4 {
		t.Errorf("the saver's samples came one per %s during the save: not every %s", mean, fine)
	}
	for i := 2; i < len(otherAt); i++ {
		if g := otherAt[i] - otherAt[i-1]; g < rest*7/10 {
			t.Errorf("the other node's samples %s apart while the saver saved: want %s", g, rest)
		}
	}
	// The topology during the save named the saver.
	var named bool
	for _, ev := range s.events() {
		if ev.Kind == source.EventTopology {
			for _, a := range ev.Topology.Attention {
				named = named || a.Node == saver
				if fixedPing > 0 && a.Interval != fixedPing {
					t.Errorf("attention's PING interval %s with --ping-interval %s", a.Interval, fixedPing)
				}
			}
		}
	}
	if !named {
		t.Error("no topology named the saver in attention")
	}
	// Once it has ended, the saver is back at rest.
	servertest.WaitFor(t, 10*time.Second, "the saver to go back to rest", func() bool {
		t := f.Topology()
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(t.Attention) == 0 && f.watchers[saver].w.Interval() == rest
	})
}
