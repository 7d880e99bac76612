// Package result holds what a bench measured (a Run, a server's Summary
// of its runs, and their Stat) and the ways it is written and read back:
// the seed's table, JSON for scripts and for vkwatch report. It links no
// client: a page or a reader of results imports this, not the runner
// (source/bench) that produces them.
package result

import (
	"math"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/risk"
)

// Run is what one run measured.
type Run struct {
	Server int
	// N is the run's number on its server, in the order the runs ran
	// (runs of two methods alternate: 1 fork, 2 forkless, 3 fork, ...);
	// 0 in results written before it was kept.
	N int
	// Asked is the bgsave-default-method bench set for the run and read
	// back (bench --methods); empty when it set none. A save asked
	// forkless that forked anyway (a loaded module that cannot save
	// forklessly: rdb_current_bgsave_type fork) is a fork save: its
	// Report.Kind says so, and Forced does.
	Asked  string
	Report source.SaveReport // the save as the watcher saw it end
	// WriterOps is the writers' ops/s over the window.
	WriterOps float64
	// WorstPing is the slowest PING of the window (a PING still unanswered
	// counts with its age); P99Ping the 99th percentile of the window's
	// PINGs, estimated from the per-sample summaries (see p99).
	WorstPing, P99Ping time.Duration
	// WorstSpike is the spike of the window's worst PING with its causes
	// (package spike), nil when that PING broke no spike rule.
	WorstSpike *source.Spike
	// ServerCOW and ServerSeconds are rdb_last_cow_size and
	// rdb_last_bgsave_time_sec, read from the server after the run where
	// the run's save set them (see source.SaveReport.COW): a forkless
	// save's ServerCOW is 0, no child, whatever the field holds (the last
	// fork save's); a save that failed, was cancelled or aborted has
	// none. Absent then.
	ServerCOW     source.Opt[int64]
	ServerSeconds source.Opt[int64]
	// DatasetKeys (DBSIZE of the database) and UsedMemory (used_memory)
	// are the dataset as the run began, before its writers started: a
	// dataset that changes from run to run shows here.
	DatasetKeys, UsedMemory int64
	// AllocatorFree is allocator_rss_bytes as the run began: the
	// allocator's free resident pages, which the forecast's bound counts
	// (see forecast.Forecast.AllocatorFree). Absent without jemalloc.
	AllocatorFree source.Opt[int64]
	// WriterMisses counts the writers' SETs that found no key (SET XX
	// wrote nothing): part of the keyspace went missing during the run.
	WriterMisses uint64
	// MemDelta is the peak memory the save cost, as the seed's cgroup
	// measured it: the server's RSS above its level before the save plus the
	// save child's copy-on-write, at the worst sample. Absent when the
	// watcher saw no memory figures during the save.
	MemDelta source.Opt[int64]
	// Forecast is what the runs before this one forecast its save to
	// copy (forecast.Predict on the dataset and write rate of this run
	// before its BGSAVE, calibrated on the runs before; the first run
	// has the uniform bound), and ForecastErr its signed error against
	// ServerCOW.
	Forecast    forecast.Forecast
	ForecastErr source.Opt[float64]
	// RateBefore is the write rate the forecast and the calibration
	// take: the writers' own SETs a second from rateWarmup after the
	// window opened (their start is slower than their stride) to the
	// BGSAVE, over forecast.RateWindow at the most, as the monitor takes
	// INFO's. The report's OpsBefore (INFO's ops/s of the 5 s before
	// the save) reaches back past this run's writers into the idle gap
	// between runs, and read a third to two thirds of the rate here.
	// PeakBefore is the highest rate between two samples of that span,
	// the upper bound's.
	RateBefore, PeakBefore source.Opt[float64]
	// Limits are the memory limits the server's host had in the last
	// sample before the run's BGSAVE (risk.Limits): what a fork could
	// take, against which the verdict sets what the saves cost.
	Limits []Limit
}

// Forced says the run asked for a forkless save and the server forked.
func (r *Run) Forced() bool { return r.Asked == "forkless" && r.Report.Kind.Method() == "fork" }

// Limit is one memory limit as a run began: Cap the limit, Base what
// already counted against it (zero for MemAvailable, which used memory is
// outside of), each with its instrument.
type Limit struct {
	Kind      risk.LimitKind
	Cap, Base risk.Figure
}

// LimitsOf keeps the limits of risk.Limits.
func LimitsOf(cs []risk.Check) []Limit {
	out := make([]Limit, 0, len(cs))
	for _, c := range cs {
		out = append(out, Limit{Kind: c.Limit, Cap: c.Cap, Base: c.Base})
	}
	return out
}

// Headroom is what the limit left for a fork.
func (l Limit) Headroom() int64 { return l.Cap.Bytes - l.Base.Bytes }

// Stat is mean / min / max over the runs that had the value; N counts them
// (0: no run had it, and the other fields mean nothing).
type Stat struct {
	Mean, Min, Max float64
	N              int
}

// Summary is one server's runs and their statistics. COW and MemDelta are
// bytes, SaveTime seconds (observed by sampling), WriterOps ops/s, WorstPing
// and P99Ping milliseconds.
type Summary struct {
	Server int
	Addr   string
	Label  string // Target.Label
	Kind   string // the saves' kind, e.g. "BGSAVE fork"
	// Method is the method of the column's saves where bench saved one
	// server both ways (--methods): its runs are those whose saves ran
	// that way, whatever was asked. Empty otherwise.
	Method string
	Runs   []Run

	COW, MemDelta, SaveTime, WriterOps, WorstPing, P99Ping Stat
	// ServerTime is rdb_last_bgsave_time_sec of the runs' saves (the
	// seed's "save wall time"), seconds; Blocked the writers each save
	// held up at its worst (source.SaveReport.BlockedWriters).
	ServerTime, Blocked Stat
	// DatasetKeys and UsedMemory are the runs' datasets as each began.
	DatasetKeys, UsedMemory Stat
	// ForecastErr is the signed relative error of the calibrated runs'
	// forecast copy-on-write (Run.ForecastErr).
	ForecastErr Stat
}

// Summarise fills in the statistics from the runs.
func (s *Summary) Summarise() {
	var cow, mem, save, ops, worst, p99, keys, used, ferr []float64
	kinds := map[string]bool{}
	var kindList []string
	for _, r := range s.Runs {
		if k := string(r.Report.Kind); k != "" && !kinds[k] {
			kinds[k] = true
			kindList = append(kindList, k)
		}
		if v, ok := r.Report.COW.Get(); ok {
			cow = append(cow, float64(v))
		}
		if v, ok := r.MemDelta.Get(); ok {
			mem = append(mem, float64(v))
		}

		save = append(save, r.Report.Observed.Seconds())
		ops = append(ops, r.WriterOps)
		worst = append(worst, ms(r.WorstPing))
		p99 = append(p99, ms(r.P99Ping))
		if e, ok := r.ForecastErr.Get(); ok && r.Forecast.Basis == forecast.Calibrated {
			ferr = append(ferr, e)
		}
		keys = append(keys, float64(r.DatasetKeys))
		used = append(used, float64(r.UsedMemory))
	}
	s.Kind = strings.Join(kindList, ", ")
	s.COW, s.MemDelta, s.SaveTime = stat(cow), stat(mem), stat(save)
	s.WriterOps, s.WorstPing, s.P99Ping = stat(ops), stat(worst), stat(p99)
	s.DatasetKeys, s.UsedMemory = stat(keys), stat(used)
	s.ForecastErr = stat(ferr)
	s.ServerTime, s.Blocked = runStats(s.Runs)
}

// runStats are the server save times and the blocked writers of runs.
func runStats(runs []Run) (serverTime, blocked Stat) {
	var st, bl []float64
	for _, r := range runs {
		if v, ok := r.ServerSeconds.Get(); ok {
			st = append(st, float64(v))
		}
		if v, ok := r.Report.BlockedWriters().Get(); ok {
			bl = append(bl, float64(v))
		}
	}
	return stat(st), stat(bl)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func stat(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{}
	}
	s := Stat{Min: vs[0], Max: vs[0], N: len(vs)}
	var sum float64
	for _, v := range vs {
		sum += v
		s.Min = math.Min(s.Min, v)
		s.Max = math.Max(s.Max, v)
	}
	s.Mean = sum / float64(len(vs))
	return s
}

// inertSummaries returns s with every string the servers said made inert
// (source/inert), s itself unchanged.
func inertSummaries(s []Summary) []Summary {
	out := make([]Summary, len(s))
	for i, x := range s {
		x.Addr, x.Label, x.Kind = inert.Text(x.Addr), inert.Text(x.Label), inert.Text(x.Kind)
		x.Method = inert.Text(x.Method)
		runs := make([]Run, len(x.Runs))
		for j, r := range x.Runs {
			r.Report = r.Report.Inert()
			if r.WorstSpike != nil {
				sp := r.WorstSpike.Inert()
				r.WorstSpike = &sp
			}
			r.Asked = inert.Text(r.Asked)
			r.Limits = inertLimits(r.Limits)
			r.Forecast.Basis = forecast.Basis(inert.Text(string(r.Forecast.Basis)))
			r.Forecast.DurationFrom = inert.Text(r.Forecast.DurationFrom)
			runs[j] = r
		}
		x.Runs = runs
		out[i] = x
	}
	return out
}

// inertLimits is ls with its names and instruments made inert (a cgroup's
// path is the host's text; a file read back is anyone's), ls unchanged.
func inertLimits(ls []Limit) []Limit {
	out := make([]Limit, len(ls))
	for i, l := range ls {
		l.Kind = risk.LimitKind(inert.Text(string(l.Kind)))
		l.Cap.From, l.Base.From = inert.Text(l.Cap.From), inert.Text(l.Base.From)
		out[i] = l
	}
	return out
}
