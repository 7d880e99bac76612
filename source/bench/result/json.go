package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/risk"
)

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
	// Run is the run's number on its server, in the order runs ran.
	Run int `json:"run"`
	// MethodAsked is the bgsave-default-method set for the run
	// (--methods); a run asked forkless whose kind is BGSAVE fork forked
	// anyway.
	MethodAsked   string    `json:"method_asked,omitempty"`
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
	// WorstSpike is the worst PING's spike, WorstCauses its causes on a
	// line; absent when that PING broke no spike rule.
	WorstCauses   string        `json:"worst_ping_causes,omitempty"`
	WorstSpike    *source.Spike `json:"worst_ping_spike,omitempty"`
	ReportServerS *int64        `json:"report_server_seconds"`
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
	// Limits are the memory limits of the server's host before the
	// save (Run.Limits).
	Limits []jsonLimit `json:"memory_limits"`
}

// jsonLimit is a Limit: the limit and what counted against it, in bytes,
// each with its instrument.
type jsonLimit struct {
	Limit    string `json:"limit"`
	Cap      int64  `json:"cap_bytes"`
	CapFrom  string `json:"cap_from"`
	Base     int64  `json:"base_bytes"`
	BaseFrom string `json:"base_from,omitempty"`
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
	Server int    `json:"server"`
	Addr   string `json:"addr"`
	Label  string `json:"label,omitempty"`
	Kind   string `json:"kind"`
	// Method is the column's saves' method where one server was saved
	// both ways (--methods).
	Method    string    `json:"method,omitempty"`
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
		Verdict jsonVerdict   `json:"verdict"`
	}{Servers: []jsonSummary{}, Verdict: toJSONVerdict(Decide(s))}
	for _, x := range s {
		js := jsonSummary{
			Server: x.Server, Addr: x.Addr, Label: x.Label, Kind: x.Kind, Method: x.Method, Runs: []jsonRun{},
			COW: toJSONStat(x.COW), MemDelta: toJSONStat(x.MemDelta), SaveTime: toJSONStat(x.SaveTime),
			WriterOps: toJSONStat(x.WriterOps), WorstPing: toJSONStat(x.WorstPing), P99Ping: toJSONStat(x.P99Ping),
			Keys: toJSONStat(x.DatasetKeys), Used: toJSONStat(x.UsedMemory), ForecastErr: toJSONStat(x.ForecastErr),
			ServerTime: toJSONStat(x.ServerTime), Blocked: toJSONStat(x.Blocked),
		}
		for i, r := range x.Runs {
			js.Runs = append(js.Runs, jsonRun{
				Run: cmp.Or(r.N, i+1), MethodAsked: r.Asked, Limits: toJSONLimits(r.Limits), DatasetKeys: r.DatasetKeys, UsedMemory: r.UsedMemory, WriterMisses: r.WriterMisses,
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
			if sp := r.WorstSpike; sp != nil {
				jr.WorstSpike, jr.WorstCauses = sp, sp.Summary()
			}
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

func toJSONLimits(ls []Limit) []jsonLimit {
	out := make([]jsonLimit, 0, len(ls))
	for _, l := range ls {
		out = append(out, jsonLimit{Limit: string(l.Kind), Cap: l.Cap.Bytes, CapFrom: l.Cap.From, Base: l.Base.Bytes, BaseFrom: l.Base.From})
	}
	return out
}

func fromJSONLimits(js []jsonLimit) []Limit {
	var out []Limit
	for _, l := range js {
		out = append(out, Limit{Kind: risk.LimitKind(l.Limit), Cap: risk.Figure{Bytes: l.Cap, From: l.CapFrom},
			Base: risk.Figure{Bytes: l.Base, From: l.BaseFrom}})
	}
	return out
}

// jsonVerdict is the verdict (Decide) for scripts: its sentences as the
// table prints them, and each side's figures as numbers.
type jsonVerdict struct {
	Kind    string     `json:"kind"`
	Choice  *string    `json:"choice"` // null: the figures support none
	Why     string     `json:"why"`
	Flips   string     `json:"flips,omitempty"`
	Missing []string   `json:"missing"`
	Memory  []string   `json:"memory"`
	Trade   []string   `json:"trade"`
	Sides   []jsonSide `json:"sides"`
}

type jsonSide struct {
	Addr     string `json:"addr"`
	Method   string `json:"method,omitempty"`
	Runs     int    `json:"runs"`
	Forced   int    `json:"forced_forks"`
	Peak     *int64 `json:"peak_cost_bytes"`
	PeakFrom string `json:"peak_cost_from,omitempty"`
	// Binding is the limit the peak fills most; Fill that share of the
	// limit, HeadroomShare the peak's share of what the limit left.
	Binding       *jsonLimit `json:"binding_limit"`
	Fill          *float64   `json:"binding_fill"`
	HeadroomShare *float64   `json:"headroom_share"`
}

func toJSONVerdict(v Verdict) jsonVerdict {
	j := jsonVerdict{Kind: string(v.Kind), Why: v.Why, Flips: v.Flips, Missing: nonNil(v.Missing), Memory: nonNil(v.Memory),
		Trade: nonNil(v.Trade), Sides: []jsonSide{}}
	if v.Choice != "" {
		j.Choice = &v.Choice
	}
	for _, sd := range v.Sides {
		js := jsonSide{Addr: sd.Addr, Method: sd.Method, Runs: sd.Runs, Forced: sd.Forced, Peak: optJSON(sd.Peak), PeakFrom: sd.PeakFrom}
		if b, ok := sd.Binding.Get(); ok {
			l := toJSONLimits([]Limit{b})[0]
			fill, share := sd.Fill, sd.Share
			js.Binding, js.Fill = &l, &fill
			if !math.IsInf(share, 0) {
				js.HeadroomShare = &share
			}
		}
		j.Sides = append(j.Sides, js)
	}
	return j
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}

// ErrNotBenchJSON is wrapped by ReadJSON's error when the input is not what
// WriteJSON writes.
var ErrNotBenchJSON = errors.New("not vkwatch bench --json output")

// MaxJSON bounds what ReadJSON reads: a bench of a fleet of 100 nodes and 7
// runs each writes well under 1 MiB; more is not a bench's output.
const MaxJSON = 64 << 20

// ReadJSON reads back what WriteJSON wrote (vkwatch bench --json), for
// vkwatch report. What WriteJSON leaves out (a run's cost curve, its PING
// summaries) stays zero; a Stat written as null reads back with N 0, and a
// run's null COW or memory delta as absent.
func ReadJSON(r io.Reader) ([]Summary, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxJSON+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxJSON {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrNotBenchJSON, MaxJSON>>20)
	}
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return nil, fmt.Errorf("%w: empty input", ErrNotBenchJSON)
	}
	var doc struct {
		Servers *[]jsonSummary `json:"servers"`
	}
	if err := json.Unmarshal(t, &doc); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) && syn.Offset >= int64(len(t)) && t[0] == '{' {
			return nil, fmt.Errorf("bench output cut short (JSON ends at byte %d)", len(t))
		}
		return nil, fmt.Errorf("%w: %v", ErrNotBenchJSON, err)
	}
	if doc.Servers == nil {
		return nil, fmt.Errorf("%w: no \"servers\" list", ErrNotBenchJSON)
	}
	out := make([]Summary, 0, len(*doc.Servers))
	for _, js := range *doc.Servers {
		s := Summary{
			Server: js.Server, Addr: js.Addr, Label: js.Label, Kind: js.Kind, Method: js.Method,
			COW: fromJSONStat(js.COW), MemDelta: fromJSONStat(js.MemDelta), SaveTime: fromJSONStat(js.SaveTime),
			WriterOps: fromJSONStat(js.WriterOps), WorstPing: fromJSONStat(js.WorstPing), P99Ping: fromJSONStat(js.P99Ping),
			DatasetKeys: fromJSONStat(js.Keys), UsedMemory: fromJSONStat(js.Used),
			ServerTime: fromJSONStat(js.ServerTime), Blocked: fromJSONStat(js.Blocked),
		}
		for _, jr := range js.Runs {
			s.Runs = append(s.Runs, Run{
				Server: js.Server, N: jr.Run, Asked: jr.MethodAsked, Limits: fromJSONLimits(jr.Limits),
				Report: source.SaveReport{
					Addr: js.Addr, Kind: source.SaveKind(jr.Kind), Status: jr.Status, Evidence: jr.Evidence, StartedAt: jr.StartedAt,
					COW: optFromJSON(jr.COW), COWFrom: source.Instrument(jr.COWFrom), PeakUsedDelta: optFromJSON(jr.PeakUsedDelta),
					BlockedBefore: optFromJSON(jr.BlockedBefore), BlockedDuring: optFromJSON(jr.BlockedDuring),
					BlockedAfter:  optFromJSON(jr.BlockedAfter),
					Observed:      time.Duration(jr.SaveSeconds * float64(time.Second)),
					ServerSeconds: optFromJSON(jr.ReportServerS), PeakLiveCOW: optFromJSON(jr.ReportPeakLive),
				},
				WriterOps: jr.WriterOps, WorstPing: fromMs(jr.WorstPingMs), P99Ping: fromMs(jr.P99PingMs), WorstSpike: jr.WorstSpike,
				ServerCOW: optFromJSON(jr.ServerCOW), ServerSeconds: optFromJSON(jr.ServerSeconds),
				DatasetKeys: jr.DatasetKeys, UsedMemory: jr.UsedMemory, WriterMisses: jr.WriterMisses,
				MemDelta: optFromJSON(jr.MemDelta),
			})
		}
		if js.ServerTime == nil && js.Blocked == nil {
			// Written before these figures were kept: they are the runs'.
			s.ServerTime, s.Blocked = runStats(s.Runs)
		}
		out = append(out, s)
	}
	return out, nil
}

func fromJSONStat(j *jsonStat) Stat {
	if j == nil {
		return Stat{}
	}
	return Stat{Mean: j.Mean, Min: j.Min, Max: j.Max, N: j.N}
}

func optFromJSON(p *int64) source.Opt[int64] {
	if p == nil {
		return source.Opt[int64]{}
	}
	return source.Some(*p)
}

func fromMs(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
