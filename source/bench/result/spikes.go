package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// WorstCausesMeasure names the summary table's row of what the runs'
// worst PINGs were spikes of.
const WorstCausesMeasure = "worst PING's causes (runs with each)"

// WorstCauses is one server's cell of that row: each cause with the runs
// whose worst PING it explains (in part), "fork 5/7, page_faults 2/7", and
// the runs whose worst PING broke no spike rule.
func WorstCauses(x Summary) string {
	counts := map[source.CauseKind]int{}
	none := 0
	for _, r := range x.Runs {
		if r.WorstSpike == nil {
			none++
			continue
		}
		seen := map[source.CauseKind]bool{}
		for _, c := range r.WorstSpike.Causes {
			if !seen[c.Kind] {
				seen[c.Kind] = true
				counts[c.Kind]++
			}
		}
	}
	var parts []string
	n := "/" + strconv.Itoa(len(x.Runs))
	for _, k := range source.CauseKinds() {
		if c := counts[k]; c > 0 {
			parts = append(parts, string(k)+" "+strconv.Itoa(c)+n)
		}
	}
	if none > 0 {
		parts = append(parts, "no spike "+strconv.Itoa(none)+n)
	}
	return strings.Join(parts, ", ")
}

// writeWorstSpikes writes, under the runs' table, each run's worst PING
// with its causes and their evidence, and the spike rule.
func writeWorstSpikes(w io.Writer, s []Summary) {
	var lines []string
	for _, x := range s {
		for i, r := range x.Runs {
			if sp := r.WorstSpike; sp != nil {
				lines = append(lines, fmt.Sprintf("%s run %d: worst PING %s: %s", x.Addr, i+1, source.Millis(sp.Ping), sp.Summary()))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Worst PINGs that were spikes ("+source.SpikeRule+"):")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}
