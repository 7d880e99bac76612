package page

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	src "github.com/vkwatch/vkwatch/source/report"
)

// TestStoryNamesWorstPingsCauses: the summary's sentence on the worst PING
// during a save names its spike's causes, with their evidence, made inert.
func TestStoryNamesWorstPingsCauses(t *testing.T) {
	sv := forkSave(5, 40, 0, 0.5, 1)
	sv.PingDuring = source.Latency{Count: 100, Min: time.Millisecond, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 68900 * time.Microsecond}
	sv.WorstSpike = &source.Spike{Ping: sv.PingDuring.Max, Causes: []source.SpikeCause{
		{Kind: source.CauseFork, What: "fork pause", Covers: source.Some(33 * time.Millisecond), Evidence: "latest_fork_usec, total_forks +1"},
		{Kind: source.CauseCommand, What: "KEYS\x1b]0;x\x07", Covers: source.Some(20 * time.Millisecond), Evidence: "SLOWLOG #3"}}}
	page := string(render(t, []src.Input{syntheticInput(sv)}))
	story := page[strings.Index(page, `<p class="story"`):]
	story = html.UnescapeString(story[:strings.Index(story, "</p>")])
	want := "The worst PING during a save took 68.9 ms (save #1 on 127.0.0.1:7001): fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1) + KEYS\\x1b]0;x\\x07 20.0 ms of 68.9 ms (SLOWLOG #3)"
	if !strings.Contains(story, want) {
		t.Errorf("the sentences do not say %q:\n%s", want, story)
	}
	sv.WorstSpike.Ping = time.Millisecond // another PING's spike
	page = string(render(t, []src.Input{syntheticInput(sv)}))
	if strings.Contains(page, "fork pause 33.0 ms") {
		t.Error("a spike of another PING named as the worst's")
	}
}

// TestBenchStoryNamesCauses: a bench's sentences say what its runs' worst
// PINGs were spikes of.
func TestBenchStoryNamesCauses(t *testing.T) {
	sp := &source.Spike{Ping: 20 * time.Millisecond, Causes: []source.SpikeCause{{Kind: source.CauseFork}}}
	s := result.Summary{Addr: "127.0.0.1:7001", Kind: "BGSAVE fork", Runs: []result.Run{{WorstPing: sp.Ping, WorstSpike: sp}, {WorstPing: time.Millisecond}}}
	s.Summarise()
	bv := benchViewOf([]src.Input{{Path: "b.json", Bench: []result.Summary{s}}}, 0, map[string]int{})
	if got := strings.Join(benchStory(bv), " "); !strings.Contains(got, "The runs' worst PINGs were spikes of fork 1/2, no spike 1/2 on 127.0.0.1:7001.") {
		t.Errorf("%s", got)
	}
}
