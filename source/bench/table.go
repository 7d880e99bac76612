package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/inert"
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
	return tw.Flush()
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

// runLine is the one-line account of a run for progress output.
func runLine(r Run) string {
	return fmt.Sprintf("dataset %s keys, used_memory %s; %s %s in %s (server %s), COW %s, memory delta %s, writers %s ops/s, worst PING %s, p99 PING %s, writers blocked %s",
		units.CountFloat(float64(r.DatasetKeys)), units.BytesFixed(float64(r.UsedMemory)),
		orNA(string(r.Report.Kind)), orNA(r.Report.Status), secs(r.Report.Observed.Seconds()), optSecs(r.ServerSeconds),
		cowText(&r.Report), optBytes(r.MemDelta), units.CountFloat(r.WriterOps), millis(ms(r.WorstPing)), millis(ms(r.P99Ping)),
		optCount(r.Report.BlockedWriters()))
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

// jsonStat is a Stat in JSON; a Stat no run had is null.
type jsonStat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	N    int     `json:"n"`
}

func toJSONStat(s Stat) *jsonStat {
	if s.N == 0 {
		return nil
	}
	return &jsonStat{s.Mean, s.Min, s.Max, s.N}
}

func optJSON[T int64 | float64](o source.Opt[T]) *T {
	if v, ok := o.Get(); ok {
		return &v
	}
	return nil
}

type jsonRun struct {
	Run           int       `json:"run"`
	DatasetKeys   int64     `json:"dataset_keys"`
	UsedMemory    int64     `json:"used_memory_bytes"`
	WriterMisses  uint64    `json:"writer_misses"`
	Kind          string    `json:"kind"`
	Status        string    `json:"status"`
	Evidence      string    `json:"status_evidence,omitempty"`
	StartedAt     time.Time `json:"started_at"`
	COW           *int64    `json:"cow_bytes"`
	COWFrom       string    `json:"cow_from,omitempty"`
	ServerCOW     *int64    `json:"server_cow_bytes"`
	MemDelta      *int64    `json:"mem_delta_bytes"`
	PeakUsedDelta *int64    `json:"peak_used_memory_delta_bytes"`
	SaveSeconds   float64   `json:"save_seconds_observed"`
	ServerSeconds *int64    `json:"server_seconds"`
	WriterOps     float64   `json:"writer_ops_per_sec"`
	WorstPingMs   float64   `json:"worst_ping_ms"`
	P99PingMs     float64   `json:"p99_ping_ms"`
	ReportServerS *int64    `json:"report_server_seconds"`
	// The peak of the fastest copy-on-write instrument during the save
	// (the child's Private_Dirty from /proc for a local server, else
	// INFO's current_cow_size) and its name; null when it never read.
	ReportPeakLive     *int64 `json:"peak_live_cow_bytes"`
	ReportPeakLiveFrom string `json:"peak_live_cow_from,omitempty"`
	// INFO's current_cow_size peak alone, null when the server never
	// refreshed it during the save (see source.SaveReport.PeakLiveCOW).
	PeakInfoCOW *int64 `json:"peak_current_cow_size_bytes"`
	// blocked_clients before the save, at its peak during it and after
	// it; BlockedWriters the peak above the level outside.
	BlockedBefore  *int64 `json:"blocked_clients_before"`
	BlockedDuring  *int64 `json:"blocked_clients_during"`
	BlockedAfter   *int64 `json:"blocked_clients_after"`
	BlockedWriters *int64 `json:"blocked_writers"`

	ForecastCOW     *int64   `json:"forecast_cow_bytes"`
	ForecastBasis   string   `json:"forecast_basis,omitempty"`
	ForecastError   *float64 `json:"forecast_error"`
	ForecastBound   *int64   `json:"forecast_bound_bytes"`
	ForecastSeconds *float64 `json:"forecast_seconds"`
	ForecastFrom    string   `json:"forecast_duration_from,omitempty"`
	// ForecastRate is the write rate the forecast took (Run.RateBefore),
	// ForecastPeak the highest the upper bound took (Run.PeakBefore).
	ForecastRate *float64 `json:"forecast_rate_ops_per_sec"`
	ForecastPeak *float64 `json:"forecast_peak_ops_per_sec"`
	// ForecastAllocatorFree is the part of the bound that is the
	// allocator's free resident pages (Run.AllocatorFree).
	ForecastAllocatorFree *int64 `json:"forecast_bound_allocator_free_bytes"`
}

// peakLive is the report's live copy-on-write peak from the fastest
// instrument: Sample.COW's, unless that was INFO's figure and read 0
// while the server's own rdb_last_cow_size says the save copied pages
// (INFO refreshes current_cow_size about once a second: a short save
// ends before it does), or when no instrument saw the save and the report
// took the server's figure as its peak. Absent then: never a false 0, nor
// a figure of the server's as a live one.
func peakLive(r *source.SaveReport) (source.Opt[int64], source.Instrument) {
	v, ok := r.PeakCOW.Get()
	server := r.PeakCOWFrom == source.FromRDBLastCOW || r.PeakCOWFrom == source.FromAOFLastCOW
	if !ok || server || (v == 0 && r.PeakCOWFrom != source.FromProc && r.COW.V > 0) {
		return source.Opt[int64]{}, ""
	}
	return r.PeakCOW, r.PeakCOWFrom
}

type jsonSummary struct {
	Server    int       `json:"server"`
	Addr      string    `json:"addr"`
	Label     string    `json:"label,omitempty"`
	Kind      string    `json:"kind"`
	Runs      []jsonRun `json:"runs"`
	COW       *jsonStat `json:"cow_bytes"`
	MemDelta  *jsonStat `json:"mem_delta_bytes"`
	SaveTime  *jsonStat `json:"save_seconds"`
	WriterOps *jsonStat `json:"writer_ops_per_sec"`
	WorstPing *jsonStat `json:"worst_ping_ms"`
	P99Ping   *jsonStat `json:"p99_ping_ms"`
	// ServerTime is rdb_last_bgsave_time_sec, Blocked the writers blocked.
	ServerTime *jsonStat `json:"server_save_seconds"`
	Blocked    *jsonStat `json:"blocked_writers"`
	Keys       *jsonStat `json:"dataset_keys"`
	Used       *jsonStat `json:"used_memory_bytes"`
	// ForecastErr is the signed relative error of the calibrated runs'
	// forecasts (the first run of a server has none to calibrate on).
	ForecastErr *jsonStat `json:"forecast_error"`
}

// WriteJSON writes the summaries as JSON for scripts: sizes in bytes, times
// in seconds or milliseconds as the key says, absent values as null.
func WriteJSON(w io.Writer, s []Summary) error {
	out := struct {
		Servers []jsonSummary `json:"servers"`
	}{Servers: []jsonSummary{}}
	for _, x := range s {
		js := jsonSummary{
			Server: x.Server, Addr: x.Addr, Label: x.Label, Kind: x.Kind, Runs: []jsonRun{},
			COW: toJSONStat(x.COW), MemDelta: toJSONStat(x.MemDelta), SaveTime: toJSONStat(x.SaveTime),
			WriterOps: toJSONStat(x.WriterOps), WorstPing: toJSONStat(x.WorstPing), P99Ping: toJSONStat(x.P99Ping),
			Keys: toJSONStat(x.DatasetKeys), Used: toJSONStat(x.UsedMemory), ForecastErr: toJSONStat(x.ForecastErr),
			ServerTime: toJSONStat(x.ServerTime), Blocked: toJSONStat(x.Blocked),
		}
		for i, r := range x.Runs {
			js.Runs = append(js.Runs, jsonRun{
				Run: i + 1, DatasetKeys: r.DatasetKeys, UsedMemory: r.UsedMemory, WriterMisses: r.WriterMisses,
				Kind: string(r.Report.Kind), Status: r.Report.Status, Evidence: r.Report.Evidence, StartedAt: r.Report.StartedAt,
				COW: optJSON(r.Report.COW), COWFrom: string(r.Report.COWFrom), ServerCOW: optJSON(r.ServerCOW), MemDelta: optJSON(r.MemDelta),
				PeakUsedDelta: optJSON(r.Report.PeakUsedDelta),
				SaveSeconds:   r.Report.Observed.Seconds(), ServerSeconds: optJSON(r.ServerSeconds),
				WriterOps: r.WriterOps, WorstPingMs: ms(r.WorstPing), P99PingMs: ms(r.P99Ping),
				ReportServerS: optJSON(r.Report.ServerSeconds), PeakInfoCOW: optJSON(r.Report.PeakLiveCOW),
				BlockedBefore: optJSON(r.Report.BlockedBefore), BlockedDuring: optJSON(r.Report.BlockedDuring),
				BlockedAfter: optJSON(r.Report.BlockedAfter), BlockedWriters: optJSON(r.Report.BlockedWriters()),
			})
			jr := &js.Runs[len(js.Runs)-1]
			live, from := peakLive(&r.Report)
			jr.ReportPeakLive, jr.ReportPeakLiveFrom = optJSON(live), string(from)
			if f := r.Forecast; f.Basis != "" {
				cow, secs := f.COW, f.Duration.Seconds()
				jr.ForecastCOW, jr.ForecastBasis, jr.ForecastBound = &cow, string(f.Basis), optJSON(f.Bound)
				jr.ForecastSeconds, jr.ForecastFrom = &secs, f.DurationFrom
				jr.ForecastRate, jr.ForecastPeak = optJSON(r.RateBefore), optJSON(r.PeakBefore)
				jr.ForecastAllocatorFree = optJSON(f.AllocatorFree)
				if e, ok := r.ForecastErr.Get(); ok {
					jr.ForecastError = &e
				}
			}
		}
		out.Servers = append(out.Servers, js)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	// The servers' exact text, with the C1 and bidi controls JSON leaves
	// raw escaped too: --json may be read on a terminal.
	_, err = w.Write(append(inert.JSON(b), '\n'))
	return err
}

// inertSummaries returns s with every string the servers said made inert
// (source/inert), s itself unchanged.
func inertSummaries(s []Summary) []Summary {
	out := make([]Summary, len(s))
	for i, x := range s {
		x.Addr, x.Label, x.Kind = inert.Text(x.Addr), inert.Text(x.Label), inert.Text(x.Kind)
		runs := make([]Run, len(x.Runs))
		for j, r := range x.Runs {
			r.Report = r.Report.Inert()
			r.Forecast.Basis = forecast.Basis(inert.Text(string(r.Forecast.Basis)))
			r.Forecast.DurationFrom = inert.Text(r.Forecast.DurationFrom)
			runs[j] = r
		}
		x.Runs = runs
		out[i] = x
	}
	return out
}
