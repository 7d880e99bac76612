package source

import (
	"testing"
	"time"
)

func TestSpikeText(t *testing.T) {
	sp := &Spike{Ping: 68900 * time.Microsecond, Threshold: 6 * time.Millisecond, Causes: []SpikeCause{
		{Kind: CauseFork, What: "fork pause", Covers: Some(33 * time.Millisecond), Evidence: "latest_fork_usec, total_forks +1"},
		{Kind: CauseForkless, What: "writers blocked by the forkless save", Evidence: "blocked_clients 3"},
		{Kind: CauseNotSeen, What: "not seen by the server", Covers: Some(68900 * time.Microsecond), Evidence: "no slow command"},
		{Kind: CauseCommand, What: "KEYS", Covers: Some(68900 * time.Microsecond)},
	}}
	want := "PING 68.9 ms (bar 6.0 ms): fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1) + " +
		"writers blocked by the forkless save (blocked_clients 3) + not seen by the server (no slow command) + KEYS 68.9 ms"
	if got := sp.Line(); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	r := &SaveReport{PingDuring: Latency{Count: 10, Max: sp.Ping}, WorstSpike: sp}
	if got := r.WorstPing(); got != "68.9 ms: "+sp.Summary() {
		t.Errorf("%q", got)
	}
	r.WorstSpike = &Spike{Ping: time.Millisecond}
	if got := r.WorstPing(); got != "68.9 ms" {
		t.Errorf("another PING's spike: %q", got)
	}
	if got := (&SaveReport{}).WorstPing(); got != "n/a" {
		t.Errorf("no PINGs: %q", got)
	}
	for _, k := range CauseKinds() {
		if k.ServerSide() != (k != CauseStopped && k != CauseCPUWait && k != CauseFaults && k != CauseKernelWait &&
			k != CauseVkwatch && k != CauseNotSeen && k != CauseUnexplained) {
			t.Errorf("%s: server side %v", k, k.ServerSide())
		}
	}
}
