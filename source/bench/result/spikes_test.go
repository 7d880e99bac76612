package result

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func spikeRuns() []Summary {
	fork := &source.Spike{Ping: 68900 * time.Microsecond, Normal: time.Millisecond, Threshold: 3 * time.Millisecond,
		Causes: []source.SpikeCause{
			{Kind: source.CauseFork, What: "fork pause", Covers: source.Some(33 * time.Millisecond), Evidence: "latest_fork_usec, total_forks +1"},
			{Kind: source.CauseFaults, What: "page faults", Covers: source.Some(20 * time.Millisecond), Evidence: "minflt +5000"}}}
	wait := &source.Spike{Ping: 12 * time.Millisecond, Causes: []source.SpikeCause{{Kind: source.CauseCPUWait, What: "waited for a CPU"}}}
	s := []Summary{{Addr: "127.0.0.1:7001", Runs: []Run{
		{WorstPing: fork.Ping, WorstSpike: fork}, {WorstPing: wait.Ping, WorstSpike: wait}, {WorstPing: time.Millisecond},
	}}}
	s[0].Summarise()
	return s
}

// TestTableWorstCauses: the summary's row counts the runs each cause
// explains, and each run's worst spike is written out under the runs.
func TestTableWorstCauses(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, spikeRuns()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		WorstCausesMeasure, "fork 1/3, cpu_wait 1/3, page_faults 1/3, no spike 1/3",
		"worst PINGs that were spikes [5] (a spike is a PING above 3x",
		"  127.0.0.1:7001 (n/a) run 1: worst PING 68.9 ms: fork pause 33.0 ms of 68.9 ms (latest_fork_usec, total_forks +1) +\n" +
			"                              page faults 20.0 ms of 68.9 ms (minflt +5000)",
		"  127.0.0.1:7001 (n/a) run 2: worst PING 12.0 ms: waited for a CPU",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if n := widest(out); n > tableWidth {
		t.Errorf("a line of %d columns", n)
	}
	if strings.Contains(out, "run 3: worst") {
		t.Error("a run whose worst PING was no spike has a line")
	}
	if l := RunLine(spikeRuns()[0].Runs[1]); !strings.HasSuffix(l, "; worst PING: waited for a CPU") {
		t.Errorf("run line %q", l)
	}
}

func TestJSONWorstSpike(t *testing.T) {
	in := spikeRuns()
	var b bytes.Buffer
	if err := WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"worst_ping_causes": "fork pause 33.0 ms of 68.9 ms`) {
		t.Errorf("no causes line:\n%s", b.String())
	}
	out, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out[0].Runs {
		if !reflect.DeepEqual(r.WorstSpike, in[0].Runs[i].WorstSpike) {
			t.Errorf("run %d: %+v, want %+v", i, r.WorstSpike, in[0].Runs[i].WorstSpike)
		}
	}
}
