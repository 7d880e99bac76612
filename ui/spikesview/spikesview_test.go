package spikesview

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

const ms = time.Millisecond

// spikeAt is a spike event on node i whose PING was sent at sent.
func spikeAt(i int, sent, ping time.Duration, causes ...source.SpikeCause) source.Event {
	return source.Event{Node: uitest.NodeOf(i), Kind: source.EventSpike, Offset: sent + 400*ms, Spike: &source.Spike{
		Ping: ping, Normal: 800 * time.Microsecond, Threshold: 2400 * time.Microsecond, Sent: sent,
		From: sent - 200*ms, To: sent + 400*ms, Causes: causes,
		Checked: []string{"no eviction (evicted_keys +0)", "latency monitor off (latency-monitor-threshold 0)"}}}
}

// scenario is the two servers' minute with three spikes: a fork's on A
// during its save, a slow command's on B (its evidence with a terminal
// escape a server could have put in a client name), one nothing on A's
// server saw.
func scenario() []source.Event {
	evs := uitest.Scenario(2, 60*time.Second)
	return append(evs,
		spikeAt(0, 20*time.Second+100*ms, 68900*time.Microsecond,
			source.SpikeCause{Kind: source.CauseFork, What: "fork pause", Covers: source.Some(33 * ms), Evidence: "latest_fork_usec, total_forks +1"},
			source.SpikeCause{Kind: source.CauseFaults, What: "page faults", Covers: source.Some(20 * ms), Evidence: "minflt +5000, majflt +0, kernel time +20.0 ms (/proc/PID/task/PID/stat)"}),
		spikeAt(1, 40*time.Second, 50100*time.Microsecond,
			source.SpikeCause{Kind: source.CauseCommand, What: "DEBUG SLEEP", Covers: source.Some(50100 * time.Microsecond), Evidence: "SLOWLOG #12 from 127.0.0.1:45418 \x1b]0;owned\x07"}),
		spikeAt(0, 55*time.Second, 9*ms,
			source.SpikeCause{Kind: source.CauseNotSeen, What: "not seen by the server", Covers: source.Some(9 * ms), Evidence: "no slow command, no fork, no cycle; the server was on a CPU whenever it had work"}),
	)
}

func TestViewAloneSpikes(t *testing.T) {
	s := viewtest.Store(scenario())
	c := viewtest.Context(s, uitest.NodeOf(0), uitest.NodeOf(1))
	sps := Collect(s, c.Nodes)
	if len(sps) != 3 || sps[0].Spike.Ping != 9*ms || sps[2].Spike.Ping != 68900*time.Microsecond || sps[1].Addr != uitest.AddrB {
		t.Fatalf("spikes not newest first: %+v", sps)
	}
	v := New()
	v.SetSize(100, 24)
	v.Opened()
	v.SyncKeys(view.Open{Fills: true})
	lines := v.View(c)
	viewtest.Golden(t, lines)
	out := strings.Join(lines, "\n")
	if strings.Count(out, "checked:") != 1 {
		t.Error("what was checked is the top spike's alone")
	}
	if strings.Contains(out, "\x1b]") {
		t.Error("a server's escape reached the screen")
	}
	for _, want := range []string{"1–3 of 3, newest first", "  f fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1)",
		"  c DEBUG SLEEP 50.1 ms (SLOWLOG #12 from 127.0.0.1:45418", "checked: no eviction", "PING 9.0 ms  bar 2.4 ms, p99 0.8 ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("the view lacks %q:\n%s", want, out)
		}
	}
	// ↓ brings the next older spike to the top; it stops at the oldest.
	for range 5 {
		if took, ask := v.Update(c, viewtest.Key("down")); !took || ask != nil {
			t.Fatalf("down: took %v, asked %#v", took, ask)
		}
	}
	if got := v.View(c); !strings.Contains(got[0], "3–3 of 3") || !strings.Contains(firstHead(got), "PING 68.9 ms") {
		t.Errorf("scrolled to the oldest:\n%s", strings.Join(got, "\n"))
	}
	v.Update(c, viewtest.Key("up"))
	if got := v.View(c); !strings.Contains(got[0], "2–3 of 3") {
		t.Errorf("up from the oldest: %q", got[0])
	}
	v.SyncKeys(view.Open{})
	if took, _ := v.Update(c, viewtest.Key("down")); took {
		t.Error("the arrows scroll only while the view is open")
	}
	// Each line fits, however narrow.
	for _, w := range []int{80, 40} {
		v.SetSize(w, 24)
		for _, l := range v.View(c) {
			if n := len([]rune(l)); n > w {
				t.Errorf("%d wide: a line of %d: %q", w, n, l)
			}
		}
	}
}

func TestNoSpikes(t *testing.T) {
	s := viewtest.Store(uitest.Scenario(1, 10*time.Second))
	c := viewtest.Context(s, uitest.NodeOf(0))
	v := New()
	v.SetSize(80, 24)
	out := strings.Join(v.View(c), "\n")
	if !strings.Contains(out, "none in the window") || !strings.Contains(out, source.SpikeRule[:30]) {
		t.Errorf("no spikes:\n%s", out)
	}
}

// firstHead is the first spike's head line of a view's lines.
func firstHead(lines []string) string {
	for _, l := range lines[1:] {
		if strings.Contains(l, "  PING ") {
			return l
		}
	}
	return ""
}
