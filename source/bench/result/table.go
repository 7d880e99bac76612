package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/units"
)

// WriteTable prints the seed article's table: one column per server, one
// row per measure, each cell mean / min / max over the runs; then every run
// on a line of its own, so an outlier can be seen for what it is.
func WriteTable(w io.Writer, s []Summary) error {
	s = inertSummaries(s) // addresses, statuses, errors: the servers' text
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }

	head := []string{""}
	sub := []string{""}
	for _, x := range s {
		head = append(head, fmt.Sprintf("%s (%s)", x.Addr, orNA(x.Kind)))
		sub = append(sub, fmt.Sprintf("mean / min / max of %d runs", len(x.Runs)))
	}
	row(head...)
	row(sub...)
	measures := []struct {
		name string
		get  func(Summary) Stat
		f    func(float64) string
	}{
		{COWMeasure, func(x Summary) Stat { return x.COW }, units.BytesFixed},
		{"memory delta during save", func(x Summary) Stat { return x.MemDelta }, units.BytesFixed},
		{"save time (observed)", func(x Summary) Stat { return x.SaveTime }, secs},
		{"save time (server, rdb_last_bgsave_time_sec)", func(x Summary) Stat { return x.ServerTime }, secs},
		{"writers ops/s over the window", func(x Summary) Stat { return x.WriterOps }, units.CountFloat},
		{"worst PING", func(x Summary) Stat { return x.WorstPing }, millis},
		{"p99 PING (estimated)", func(x Summary) Stat { return x.P99Ping }, millis},
		{BlockedMeasure, func(x Summary) Stat { return x.Blocked }, units.CountFloat},
		{"dataset keys at run start (DBSIZE)", func(x Summary) Stat { return x.DatasetKeys }, units.CountFloat},
		{"used_memory at run start", func(x Summary) Stat { return x.UsedMemory }, units.BytesFixed},
		{"forecast COW error, calibrated runs", func(x Summary) Stat { return x.ForecastErr }, func(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) }},
	}
	for _, m := range measures {
		cells := []string{m.name}
		for _, x := range s {
			cells = append(cells, statCell(m.get(x), len(x.Runs), m.f))
		}
		row(cells...)
	}
	causes := []string{WorstCausesMeasure}
	for _, x := range s {
		causes = append(causes, WorstCauses(x))
	}
	row(causes...)
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	row("server", "run", "keys", "used", "kind", "status", "COW", "server COW", "mem delta", "save", "server s", "writers ops/s", "worst PING", "p99 PING",
		"blocked", "forecast COW", "basis", "error", "bound", "forecast s")
	for _, x := range s {
		for i, r := range x.Runs {
			f := r.Forecast
			row(x.Addr, strconv.Itoa(i+1), units.CountFloat(float64(r.DatasetKeys)), units.BytesFixed(float64(r.UsedMemory)),
				orNA(string(r.Report.Kind)), orNA(r.Report.Status),
				cowText(&r.Report), optBytes(r.ServerCOW), optBytes(r.MemDelta),
				secs(r.Report.Observed.Seconds()), optSecs(r.ServerSeconds),
				units.CountFloat(r.WriterOps), millis(ms(r.WorstPing)), millis(ms(r.P99Ping)),
				optCount(r.Report.BlockedWriters()), forecastCOW(f), orNA(string(f.Basis)), forecastCheck(r), optBytes(f.Bound), forecastSecs(f))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeWorstSpikes(w, s)
	return nil
}

// COWMeasure and BlockedMeasure name the table's copy-on-write and
// blocked writers rows (the page's columns say the same).
const (
	COWMeasure     = "copy-on-write (rdb_last_cow_size; forkless: none, no child)"
	BlockedMeasure = "writers blocked (blocked_clients at the save's peak, less before)"
)

// cowText is a save's copy-on-write: none for a forkless one (no child),
// n/a where no figure is this save's.
func cowText(r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return "none (no child)"
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
		c += fmt.Sprintf(" (%d runs)", st.N)
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
