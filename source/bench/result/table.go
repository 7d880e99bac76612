package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/units"
)

// WriteTable prints the seed article's table: one column per server (or
// per method, for one server saved both ways), one row per measure, each
// cell mean / min / max over the runs; then, per column, every run on a
// line of its own, so an outlier can be seen for what it is; then the
// verdict (Decide).
//
// Everything fits a 120-column terminal (tableWidth): the measures name
// their instruments in notes under the table, each column's runs are two
// tables (the save; its dataset and forecast), and where the columns of
// the seed's table would still be wider (long labels, or cells with
// fewer runs), they are printed one under the other.
func WriteTable(w io.Writer, s []Summary) error {
	s = inertSummaries(s) // addresses, statuses, errors: the servers' text
	var b strings.Builder
	writeSeeds(&b, s)
	if widest(b.String()) > tableWidth && len(s) > 1 {
		b.Reset()
		for i := range s {
			if i > 0 {
				b.WriteString("\n")
			}
			writeSeeds(&b, s[i:i+1])
		}
	}
	b.WriteString(measureNotes)
	for _, x := range s {
		writeRuns(&b, x)
	}
	writeWorstSpikes(&b, s)
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return WriteVerdict(w, Decide(s))
}

// measureNotes name the instruments of the seed's table's rows.
const measureNotes = `[1] rdb_last_cow_size, read after the run; forkless: none, no child
[2] RSS above its level before the save plus the save child's dirty pages, at the worst sample (the seed's cgroup)
[3] rdb_last_bgsave_time_sec, whole seconds
[4] blocked_clients at the save's peak, less before it
[5] each cause with the runs whose worst PING was a spike of it (in part), and the runs whose worst PING was none
`

// seedMeasures are the rows of the seed's table.
var seedMeasures = []struct {
	name string
	get  func(Summary) Stat
	f    func(float64) string
}{
	{"copy-on-write [1]", func(x Summary) Stat { return x.COW }, units.BytesFixed},
	{"memory delta during save [2]", func(x Summary) Stat { return x.MemDelta }, units.BytesFixed},
	{"save time, observed", func(x Summary) Stat { return x.SaveTime }, secs},
	{"save time, server [3]", func(x Summary) Stat { return x.ServerTime }, secs},
	{"writers ops/s over the window", func(x Summary) Stat { return x.WriterOps }, units.CountFloat},
	{"worst PING", func(x Summary) Stat { return x.WorstPing }, millis},
	{"p99 PING, estimated", func(x Summary) Stat { return x.P99Ping }, millis},
	{"writers blocked [4]", func(x Summary) Stat { return x.Blocked }, units.CountFloat},
	{"dataset keys at run start", func(x Summary) Stat { return x.DatasetKeys }, units.CountFloat},
	{"used_memory at run start", func(x Summary) Stat { return x.UsedMemory }, units.BytesFixed},
	{"forecast COW error, calibrated", func(x Summary) Stat { return x.ForecastErr }, func(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }},
}

// writeSeeds writes the seed's table of the columns s.
func writeSeeds(w io.Writer, s []Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	head := []string{""}
	sub := []string{""}
	for _, x := range s {
		head = append(head, columnName(x))
		sub = append(sub, fmt.Sprintf("mean / min / max of %d runs", len(x.Runs)))
	}
	row(tw, head...)
	row(tw, sub...)
	for _, m := range seedMeasures {
		cells := []string{m.name}
		for _, x := range s {
			cells = append(cells, statCell(m.get(x), len(x.Runs), m.f))
		}
		row(tw, cells...)
	}
	causes := []string{WorstCausesMeasure}
	for _, x := range s {
		causes = append(causes, WorstCauses(x))
	}
	row(tw, causes...)
	tw.Flush()
}

// row writes cells as one line of tw; the last cell is not padded.
func row(tw io.Writer, cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }

// rowRight writes cells as one line of a right-aligned tw: the last
// cell is terminated too, to be aligned with its column.
func rowRight(tw io.Writer, cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }

// columnName names a column of the seed's table: the server and its
// saves' kind (a cluster node's label too).
func columnName(x Summary) string {
	n := fmt.Sprintf("%s (%s)", x.Addr, orNA(x.Kind))
	if x.Label != "" {
		n += ", " + x.Label
	}
	return n
}

// widest is the width of the longest line of text.
func widest(text string) int {
	n := 0
	for line := range strings.Lines(text) {
		n = max(n, utf8.RuneCountInString(strings.TrimRight(line, "\n")))
	}
	return n
}

// writeRuns writes a column's runs: what each save cost, then the
// dataset it began with and what the runs before it forecast.
func writeRuns(w io.Writer, x Summary) {
	fmt.Fprintf(w, "\nruns of %s: the save\n", columnName(x))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	rowRight(tw, "run", "method", "status", "COW [1]", "mem delta [2]", "save", "server [3]", "writers ops/s", "worst PING", "p99 PING", "blocked [4]")
	forced := false
	for i, r := range x.Runs {
		m := orNA(r.Report.Kind.Method())
		if r.Forced() {
			m, forced = m+"*", true
		}
		rowRight(tw, runNo(r, i), m, orNA(r.Report.Status), cowText(&r.Report), optBytes(r.MemDelta),
			secs(r.Report.Observed.Seconds()), optSecs(r.ServerSeconds),
			units.CountFloat(r.WriterOps), millis(ms(r.WorstPing)), millis(ms(r.P99Ping)), optCount(r.Report.BlockedWriters()))
	}
	tw.Flush()
	if forced {
		fmt.Fprintln(w, "* asked forkless; the server forked (rdb_current_bgsave_type fork: a loaded module cannot save forklessly)")
	}
	fmt.Fprintf(w, "\nruns of %s: dataset and forecast\n", columnName(x))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	rowRight(tw, "run", "keys", "used_memory", "server COW [1]", "forecast COW", "basis", "error", "bound", "forecast s")
	for i, r := range x.Runs {
		f := r.Forecast
		rowRight(tw, runNo(r, i), units.CountFloat(float64(r.DatasetKeys)), units.BytesFixed(float64(r.UsedMemory)), optBytes(r.ServerCOW),
			forecastCOW(f), orNA(string(f.Basis)), forecastCheck(r), optBytes(f.Bound), forecastSecs(f))
	}
	tw.Flush()
}

// runNo is a run's number on its server: N, or its place in the column
// for results written before N was kept.
func runNo(r Run, i int) string {
	if r.N > 0 {
		return strconv.Itoa(r.N)
	}
	return strconv.Itoa(i + 1)
}

// cowText is a save's copy-on-write: none for a forkless one (no child),
// n/a where no figure is this save's.
func cowText(r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return "none"
	}
	return optBytes(r.COW)
}

func optSecs(o source.Opt[int64]) string {
	if v, ok := o.Get(); ok {
		return strconv.FormatInt(v, 10) + " s"
	}
	return "n/a"
}

func optCount(o source.Opt[int64]) string {
	if v, ok := o.Get(); ok {
		return strconv.FormatInt(v, 10)
	}
	return "n/a"
}

// forecastCOW is a run's forecast copy-on-write, n/a when there was none.
func forecastCOW(f forecast.Forecast) string {
	if f.Basis == "" {
		return "n/a"
	}
	return units.BytesFixed(float64(f.COW))
}

func forecastSecs(f forecast.Forecast) string {
	if f.Basis == "" || f.Basis == forecast.Forkless {
		return "n/a"
	}
	return secs(f.Duration.Seconds())
}

// forecastCheck is a run's forecast against its copy-on-write: the
// signed error of a calibrated forecast, whether an upper bound held
// ("within bound", "exceeded by 1.2 MiB": a bound's distance from the
// actual is no error); n/a without both figures or for a forkless one.
func forecastCheck(r Run) string {
	f, actual := r.Forecast, r.ServerCOW
	switch {
	case !actual.OK:
	case f.Basis == forecast.Calibrated:
		return pct(r.ForecastErr)
	case f.Basis == forecast.Bound || f.Basis == forecast.Worst:
		if actual.V <= f.COW {
			return "within bound"
		}
		return "exceeded by " + units.BytesFixed(float64(actual.V-f.COW))
	}
	return "n/a"
}

// pct prints a signed relative error: +12.3%.
func pct(o source.Opt[float64]) string {
	if v, ok := o.Get(); ok {
		return fmt.Sprintf("%+.1f%%", 100*v)
	}
	return "n/a"
}

// WriteTables prints WriteTable for each server on its own, one after the
// other under a line naming it: a fleet's nodes are too many for columns
// side by side.
func WriteTables(w io.Writer, s []Summary) error {
	s = inertSummaries(s)
	for i, x := range s {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := "== " + x.Addr
		if x.Label != "" {
			title += " (" + x.Label + ")"
		}
		fmt.Fprintln(w, title+" ==")
		if err := WriteTable(w, s[i:i+1]); err != nil {
			return err
		}
	}
	return nil
}

// RunLine is the one-line account of a run for progress output.
func RunLine(r Run) string {
	return fmt.Sprintf("dataset %s keys, used_memory %s; %s %s in %s (server %s), COW %s, memory delta %s, writers %s ops/s, worst PING %s, p99 PING %s, writers blocked %s",
		units.CountFloat(float64(r.DatasetKeys)), units.BytesFixed(float64(r.UsedMemory)),
		orNA(string(r.Report.Kind)), orNA(r.Report.Status), secs(r.Report.Observed.Seconds()), optSecs(r.ServerSeconds),
		cowText(&r.Report), optBytes(r.MemDelta), units.CountFloat(r.WriterOps), millis(ms(r.WorstPing)), millis(ms(r.P99Ping)),
		optCount(r.Report.BlockedWriters())) + worstLine(r)
}

// worstLine is a run's worst PING's causes for its line, "" when it was
// no spike.
func worstLine(r Run) string {
	if r.WorstSpike == nil {
		return ""
	}
	return "; worst PING: " + r.WorstSpike.Summary()
}

func statCell(st Stat, runs int, f func(float64) string) string {
	if st.N == 0 {
		return "n/a"
	}
	c := f(st.Mean) + " / " + f(st.Min) + " / " + f(st.Max)
	if st.N != runs {
		c += fmt.Sprintf(" (%d of %d runs)", st.N, runs)
	}
	return c
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func optBytes(o source.Opt[int64]) string {
	if v, ok := o.Get(); ok {
		return units.BytesFixed(float64(v))
	}
	return "n/a"
}

func secs(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " s" }

func millis(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" }

// tableWidth is the width bench's text fits: a 120-column terminal.
// Cells are never cut; a verdict's long lines wrap at words.
const tableWidth = 120

// WriteVerdict prints the verdict under the table, a label and its text
// on each line, wrapped to tableWidth.
func WriteVerdict(w io.Writer, v Verdict) error {
	v = v.inert()
	title := "verdict: the servers compared"
	if v.Kind == Methods {
		title = "verdict: which method for this server"
	}
	lines := []string{title + " (the rule: README, bench)"}
	add := func(label string, texts ...string) {
		for i, t := range texts {
			if i > 0 {
				label = ""
			}
			lines = append(lines, wrap(fmt.Sprintf("  %-9s ", label), t, tableWidth)...)
		}
	}
	add("memory", v.Memory...)
	add("trade", v.Trade...)
	choice := "none"
	if v.Choice != "" {
		choice = v.Choice
	}
	add("choice", choice+": "+v.Why)
	if v.Flips != "" {
		add("flips to", v.Flips)
	}
	add("missing", v.Missing...)
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// wrap breaks text at spaces into lines of at most width columns, the
// first starting with lead and the rest indented as far.
func wrap(lead, text string, width int) []string {
	indent := strings.Repeat(" ", utf8.RuneCountInString(lead))
	var out []string
	line := lead
	fresh := true
	for _, word := range strings.Fields(text) {
		if !fresh && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			out = append(out, line)
			line, fresh = indent, true
		}
		if !fresh {
			line += " "
		}
		line += word
		fresh = false
	}
	return append(out, line)
}
