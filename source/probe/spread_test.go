package probe

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// Phase: 0 at 2 ms (the saving node's and two servers' grid), else a
// multiple of 2 ms below the interval; a thousand nodes PINGed every
// second fall in some sixty groups of about fifteen, not one of a thousand.
func TestPhaseSpreadsAFleet(t *testing.T) {
	for _, s := range []uint32{0, 1, 0xffffffff, Spread("127.0.0.1:6379")} {
		if p := Phase(s, 2*time.Millisecond); p != 0 {
			t.Errorf("spread %#x at 2ms: phase %d, want 0", s, p)
		}
		for _, iv := range []time.Duration{4 * time.Millisecond, 5 * time.Millisecond, 150 * time.Millisecond, time.Second, 64 * time.Second} {
			p := Phase(s, iv)
			if p < 0 || p >= int64(iv) || p%spreadQuantum != 0 {
				t.Errorf("spread %#x at %v: phase %d, want a multiple of 2ms in [0, %v)", s, iv, p, iv)
			}
		}
	}
	groups := map[int64]int{}
	for i := range 1000 {
		groups[Phase(Spread("10.0.0.1:"+strconv.Itoa(7000+i)), time.Second)]++
	}
	most := 0
	for _, n := range groups {
		most = max(most, n)
	}
	if len(groups) < 60 || most > 30 {
		t.Errorf("1,000 nodes at 1s: %d groups, the largest %d; want 60 or more, 30 at most", len(groups), most)
	}
	t.Logf("1,000 nodes at 1s: %d groups, the largest %d", len(groups), most)
}

func TestGridAfter(t *testing.T) {
	for _, c := range []struct{ t, iv, phase, want int64 }{
		{0, 10, 0, 10}, {9, 10, 0, 10}, {10, 10, 0, 20},
		{0, 10, 4, 4}, {3, 10, 4, 4}, {4, 10, 4, 14}, {13, 10, 4, 14}, {14, 10, 4, 24},
	} {
		if got := gridAfter(c.t, c.iv, c.phase); got != c.want {
			t.Errorf("gridAfter(%d, %d, %d) = %d, want %d", c.t, c.iv, c.phase, got, c.want)
		}
	}
}

// TestProbeLoopKeepsPhases: two probes of 200 ms on the shared loop, one
// at phase 0 and one at half the interval, are PINGed half an interval
// apart, each on its own shifted grid (without phases both would be
// PINGed at the same tick).
func TestProbeLoopKeepsPhases(t *testing.T) {
	const iv = 200 * time.Millisecond
	srv := servertest.StartDefault(t)
	ep := endpointOf(t, srv)
	spreads := []uint32{0, 0x8000 << 16}
	want := []int64{0, int64(iv / 2)}
	probes := make([]*Probe, len(spreads))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i, s := range spreads {
		if got := Phase(s, iv); got != want[i] {
			t.Fatalf("Phase(%#x, %v) = %v, want %v", s, iv, time.Duration(got), time.Duration(want[i]))
		}
		probes[i] = New(ep, nil, iv, 3*time.Second, iv)
		probes[i].spread = s
		wg.Go(func() { probes[i].Run(ctx) })
	}
	for _, p := range probes {
		sharedConn(t, p, 1) // on the loop, its first PING (sent at once, off the grid) answered
	}
	// When each PING was sent (sentAt, kept until its reply is read: at
	// the next tick, the replies carrying the kernel's timestamps), polled
	// every millisecond: how late it is after its grid point. A loaded
	// machine makes the loop late by some milliseconds, never by half the
	// interval.
	late := make([][]time.Duration, len(probes))
	seen := make([]int64, len(probes))
	for i, p := range probes {
		seen[i] = p.sentAt.Load()
	}
	for end := time.Now().Add(5 * iv); time.Now().Before(end); time.Sleep(time.Millisecond) {
		for i, p := range probes {
			if at := p.sentAt.Load(); at != 0 && at != seen[i] {
				seen[i] = at
				late[i] = append(late[i], time.Duration((at-want[i])%int64(iv)))
			}
		}
	}
	for i := range probes {
		if len(late[i]) < 3 {
			t.Fatalf("probe %d: %d PINGs seen sent in %v", i, len(late[i]), 5*iv)
		}
		slices.Sort(late[i])
		if med := late[i][len(late[i])/2]; med > iv/4 {
			t.Errorf("probe %d (phase %v): sent a median %v after its grid points (%v), want within %v", i, time.Duration(want[i]), med, late[i], iv/4)
		}
	}
}
