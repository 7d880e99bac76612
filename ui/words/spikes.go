package words

import (
	"slices"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// spikeCauses are the letters a PING spike is marked with on the ping
// chart, one a cause (lower case: the marker row's upper-case letters are
// saves), and the cause's short name for the chart's legend.
var spikeCauses = map[source.CauseKind]struct {
	letter rune
	name   string
}{
	source.CauseFork:         {'f', "fork"},
	source.CauseCommand:      {'c', "command"},
	source.CauseExpire:       {'e', "expiry"},
	source.CauseEviction:     {'v', "eviction"},
	source.CauseLazyFree:     {'z', "lazy free"},
	source.CauseDefrag:       {'d', "defrag"},
	source.CauseAOF:          {'a', "aof fsync"},
	source.CauseForkless:     {'b', "blocked writers"},
	source.CauseLatencyEvent: {'l', "latency event"},
	source.CauseStopped:      {'s', "stopped"},
	source.CauseCPUWait:      {'w', "cpu wait"},
	source.CauseFaults:       {'p', "page faults"},
	source.CauseKernelWait:   {'k', "kernel"},
	source.CauseVkwatch:      {'o', "vkwatch late"},
	source.CauseNotSeen:      {'n', "not seen by server"},
	source.CauseUnexplained:  {'?', "unexplained"},
}

// SpikeLetter is the letter of a cause; '?' for one this vkwatch does not
// know (a later recording's).
func SpikeLetter(k source.CauseKind) rune {
	if c, ok := spikeCauses[k]; ok {
		return c.letter
	}
	return '?'
}

// SpikeName is a cause's short name, as the legend says it.
func SpikeName(k source.CauseKind) string {
	if c, ok := spikeCauses[k]; ok {
		return c.name
	}
	return string(k)
}

// MainCause is the cause a spike is marked with: the one that covers the
// most of it, else (none says how much) its first, the server's own
// first. Its kind is CauseUnexplained for a spike without causes.
func MainCause(sp *source.Spike) source.CauseKind {
	if len(sp.Causes) == 0 {
		return source.CauseUnexplained
	}
	best := 0
	for i, c := range sp.Causes {
		if c.Covers.OK && (!sp.Causes[best].Covers.OK || c.Covers.V > sp.Causes[best].Covers.V) {
			best = i
		}
	}
	return sp.Causes[best].Kind
}

// SpikeLegend is the legend of the causes marked, in source.CauseKinds'
// order: "f fork c command n not seen by server".
func SpikeLegend(marked []source.CauseKind) string {
	var parts []string
	for _, k := range source.CauseKinds() {
		if slices.Contains(marked, k) {
			parts = append(parts, string(SpikeLetter(k))+" "+SpikeName(k))
		}
	}
	for _, k := range marked {
		if _, ok := spikeCauses[k]; !ok && !slices.Contains(parts, "? "+string(k)) {
			parts = append(parts, "? "+string(k))
		}
	}
	return strings.Join(parts, " ")
}
