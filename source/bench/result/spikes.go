package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// WorstCausesMeasure names the summary table's row of what the runs'
// worst PINGs were spikes of (measureNotes says how it counts).
const WorstCausesMeasure = "worst PING's causes [5]"

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

// writeWorstSpikes writes, under the runs' tables, each run's worst PING
// that was a spike with its causes and their evidence, wrapped to
// tableWidth, and the spike rule.
func writeWorstSpikes(w io.Writer, s []Summary) {
	var lines []string
	for _, x := range s {
		for i, r := range x.Runs {
			if sp := r.WorstSpike; sp != nil {
				lead := fmt.Sprintf("  %s run %s: ", columnName(x), runNo(r, i))
				lines = append(lines, wrap(lead, "worst PING "+source.Millis(sp.Ping)+": "+sp.Summary(), tableWidth)...)
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.Join(wrap("", "worst PINGs that were spikes [5] ("+source.SpikeRule+"):", tableWidth), "\n"))
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}
