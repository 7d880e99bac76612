package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// TestReportNamesWorstSpike: a save's report says what its worst PING was
// a spike of, and only of that PING.
func TestReportNamesWorstSpike(t *testing.T) {
	ping := 68900 * time.Microsecond
	r := &source.SaveReport{Kind: source.SaveFork, Status: "ok", PingDuring: source.Latency{Count: 100, Max: ping},
		WorstSpike: &source.Spike{Ping: ping, Causes: []source.SpikeCause{
			{Kind: source.CauseFork, What: "fork pause", Covers: source.Some(33 * time.Millisecond), Evidence: "latest_fork_usec, total_forks +1"}}}}
	if got := strings.Join(ReportLines(r), "\n"); !strings.Contains(got, "ping max was f fork pause 33.0 ms") {
		t.Errorf("no spike in the report:\n%s", got)
	}
	r.WorstSpike.Ping = time.Millisecond
	if got := strings.Join(ReportLines(r), "\n"); strings.Contains(got, "ping max was") {
		t.Errorf("another PING's spike named:\n%s", got)
	}
}
