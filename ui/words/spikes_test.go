package words

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

func TestSpikeWords(t *testing.T) {
	ms := time.Millisecond
	sp := &source.Spike{Ping: 68900 * time.Microsecond, Causes: []source.SpikeCause{
		{Kind: source.CauseFork, What: "fork pause", Covers: source.Some(33 * ms), Evidence: "latest_fork_usec"},
		{Kind: source.CauseFaults, What: "page faults", Covers: source.Some(35 * ms)},
		{Kind: source.CauseForkless, What: "writers blocked"},
	}}
	if k := MainCause(sp); k != source.CauseFaults {
		t.Errorf("main cause %s, want the one covering most", k)
	}
	if k := MainCause(&source.Spike{Causes: []source.SpikeCause{{Kind: source.CauseForkless}, {Kind: source.CauseCPUWait}}}); k != source.CauseForkless {
		t.Errorf("main cause %s, want the first where none says how much", k)
	}
	if k := MainCause(&source.Spike{}); k != source.CauseUnexplained {
		t.Errorf("no causes: %s", k)
	}
	if got := SpikeLegend([]source.CauseKind{source.CauseNotSeen, source.CauseFork, "later_kind"}); got != "f fork n not seen by server ? later_kind" {
		t.Errorf("legend %q", got)
	}
	// Every cause has a letter of its own and a name.
	seen := map[rune]source.CauseKind{}
	for _, k := range source.CauseKinds() {
		l := SpikeLetter(k)
		if o, dup := seen[l]; dup {
			t.Errorf("%s and %s share %q", k, o, l)
		}
		if _, ok := spikeCauses[k]; !ok {
			t.Errorf("%s has no letter", k)
		}
		seen[l] = k
	}
}
