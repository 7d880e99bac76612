package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// TestFleetFilterAndSummaryOnRealServers watches 32 real servers as a
// fleet, kills two, and checks the summary line's counts, then that the
// filter "down" keeps exactly the two killed, and a filter by address
// exactly its node.
func TestFleetFilterAndSummaryOnRealServers(t *testing.T) {
	const n = 32
	srvs := servertest.StartMany(t, n, server.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	members := make([]fleet.Member, n)
	nodes := make([]Node, n)
	for i, s := range srvs {
		ep := sourcetest.Endpoint(t, s.Addr)
		members[i] = fleet.Member{ID: ep.Node(), Endpoint: ep}
		nodes[i] = Node{ID: ep.Node(), Addr: ep.String()}
	}
	f := fleet.NewList(members, fleet.Config{Watch: watch.Config{Interval: 100 * time.Millisecond}})
	defer f.Close()
	top, err := f.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		evs []source.Event
	)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	defer func() { stop(); <-done }()
	go func() {
		defer close(done)
		f.Run(runCtx, func(ev source.Event) {
			mu.Lock()
			evs = append(evs, ev)
			mu.Unlock()
		})
	}()
	m := sized(New(Config{Nodes: nodes, Topology: &top}), 200, 50)
	// pump hands the model what the fleet said since, as the wiring does.
	pump := func() {
		mu.Lock()
		batch := evs
		evs = nil
		mu.Unlock()
		if len(batch) > 0 {
			nm, _ := m.Update(EventsMsg(batch))
			m = nm.(Model)
		}
	}
	waitView := func(what string, cond func(string) bool) {
		t.Helper()
		servertest.WaitFor(t, time.Minute, what, func() bool {
			pump()
			return cond(plainView(m))
		})
	}
	waitView("every node up, with a footprint", func(v string) bool {
		return strings.Contains(v, fmt.Sprintf("%d up · footprint ", n)) && !strings.Contains(v, "footprint 0 B")
	})
	killed := []*server.Server{srvs[3], srvs[20]}
	for _, s := range killed {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	waitView("the summary to count two down", func(v string) bool {
		return strings.Contains(v, fmt.Sprintf("%d up, 2 down · footprint ", n-2))
	})
	rows := func() []string {
		var out []string
		for _, l := range strings.Split(plainView(m), "\n") {
			for _, s := range srvs {
				if strings.Contains(l, " "+s.Addr+" ") {
					out = append(out, s.Addr)
				}
			}
		}
		return out
	}
	typeFilter := func(text string) {
		m, _ = press(m, "/")
		for _, r := range text {
			m, _ = press(m, string(r))
		}
		m, _ = press(m, "enter")
	}
	typeFilter("down")
	got := rows()
	if len(got) != 2 || got[0] != killed[0].Addr || got[1] != killed[1].Addr {
		t.Fatalf("filter down shows %v, want %s and %s:\n%s", got, killed[0].Addr, killed[1].Addr, plainView(m))
	}
	if v := plainView(m); !strings.Contains(v, fmt.Sprintf(`filter "down": 2 of %d`, n)) {
		t.Errorf("the head line does not say the filter:\n%s", v)
	}
	// The summary still counts the whole fleet.
	if v := plainView(m); !strings.Contains(v, fmt.Sprintf("%d up, 2 down", n-2)) {
		t.Errorf("the summary counts only what the filter shows:\n%s", v)
	}
	// esc clears it; a filter by address keeps its node; q typed in the
	// filter is text, not quit.
	m, _ = press(m, "esc")
	if got := rows(); len(got) < 3 {
		t.Fatalf("esc left %d rows", len(got))
	}
	typeFilter(srvs[7].Addr + " up")
	if got := rows(); len(got) != 1 || got[0] != srvs[7].Addr {
		t.Fatalf("filter by address shows %v, want %s:\n%s", got, srvs[7].Addr, plainView(m))
	}
	m, _ = press(m, "esc")
	m, _ = press(m, "/")
	m, cmd := press(m, "q")
	if cmd != nil {
		t.Errorf("q typed in the filter returned a command (quit?)")
	}
	if v := plainView(m); !strings.Contains(v, "/q▏") {
		t.Errorf("q typed in the filter is not in it:\n%s", v)
	}
}
