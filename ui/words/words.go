// Package words says a save's facts the way every view says them: who
// started it, how it ended, what it cost by the server's account, the
// forecast's basis and headroom, whether the server can cancel it, and the
// warning of a fork a limit would not hold. The numbers and the rules are
// source's (source/forecast, source/risk); this package only says them,
// so that a pane, a fleet row, the reports table and the headless save
// command say one thing one way.
package words

import (
	"fmt"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
)

// MarkMigration is a slot migration's fork on a pane's marker row.
const MarkMigration = 'M'

// fmtTrigger says who started a save: "vkwatch", "replica 10.0.0.7:6380,
// diskless", "schedule (save 60 10000)"; n/a when vkwatch cannot tell.
func Trigger(t source.Trigger) string {
	switch {
	case t.Kind == "":
		return text.NA
	case t.Detail == "" || t.Kind == source.TriggerUser:
		// vkwatch's own command is the save's kind already.
		return string(t.Kind)
	case strings.HasPrefix(t.Detail, string(t.Kind)):
		return t.Detail
	}
	return string(t.Kind) + " (" + t.Detail + ")"
}

// reportStatus renders a report's status, readable without colour.
func Status(st *style.Styles, r *source.SaveReport) string {
	switch r.Status {
	case "":
		if r.Kind == source.SaveForklessSync {
			return st.Dim.R("a sync: no status")
		}
		return st.Value.R(text.NA)
	case "ok":
		return st.OK.R("ok")
	case source.StatusCancelled:
		// The user's own doing, not a failure of the server's.
		return st.Warn.R(source.StatusCancelled)
	}
	return st.Err.R("✗ " + r.Status)
}

// fmtServerSecs is rdb_last_bgsave_time_sec / aof_last_rewrite_time_sec:
// whole seconds of the server's clock, so 0 is under a second.
func ServerSecs(o source.Opt[int64]) string {
	v, ok := o.Get()
	switch {
	case !ok:
		return text.NA
	case v == 0:
		return "<1s"
	}
	return fmt.Sprintf("%ds", v)
}

// fmtObserved is how long the samples saw a save run: "≤0.2s" for one
// no sample saw running (it ran between two of them).
func Observed(r *source.SaveReport) string {
	if r.ObservedUpTo {
		return "≤" + text.Elapsed(r.Observed)
	}
	return text.Elapsed(r.Observed)
}

// reportCOW is a save's copy-on-write by the server's account: none for a
// forkless save or sync (no child: never rdb_last_cow_size, which is the
// last fork save's), n/a where no figure is this save's (a fork save
// that failed, was cancelled or aborted).
func COW(r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return "none (no child)"
	}
	return text.OptBytes(r.COW)
}

// reportPause is a save's fork pause: none for a forkless one.
func Pause(r *source.SaveReport) string {
	if r.Kind.Method() == "forkless" {
		return "none (no fork)"
	}
	return optPause(r.ForkPause)
}

// kindNames are a save kind's mark on the marker row and its name in a
// fleet row's few cells (shortKind; none for a slot migration's fork).
var kinds = map[source.SaveKind]struct {
	mark  rune
	short string
}{
	source.SaveFork:          {'F', "fork"},
	source.SaveForkless:      {'L', "forkless"},
	source.SaveAOF:           {'A', "aof"},
	source.SaveSlotMigration: {MarkMigration, ""},
}

func Mark(k source.SaveKind) rune {
	if n, ok := kinds[k]; ok {
		return n.mark
	}
	return '?'
}

// shortKind names a save in a row's few cells: fork, forkless, aof.
func ShortKind(k source.SaveKind) string {
	if n := kinds[k]; n.short != "" {
		return n.short
	}
	return text.OrNA(string(k))
}

// headroom is the memory check of the next fork save of a node's view,
// with its forecast copy-on-write in the check.
func Headroom(v store.View, aof bool) risk.Fork {
	return risk.Assess(risk.Input{Sample: v.Latest, Last: v.Report, AOF: aof, Forecast: forecast.RiskFigure(v.Forecast)})
}

// basisWords are each basis's words: in a few cells, and in a table cell.
var basisWords = map[forecast.Basis][2]string{
	forecast.Calibrated: {"calibrated", "cal"},
	forecast.Bound:      {"upper bound", "bound"},
	forecast.Worst:      {"worst case", "worst"},
}

// basisTag is the forecast's basis in a few cells.
func Basis(b forecast.Basis) string {
	if w, ok := basisWords[b]; ok {
		return w[0]
	}
	return string(b)
}

// shortBasis is a basis for a table cell.
func ShortBasis(b forecast.Basis) string {
	if w, ok := basisWords[b]; ok {
		return w[1]
	}
	return string(b)
}

// levelText is a headroom level as a word and its style.
func Level(st *style.Styles, f risk.Fork) string {
	switch f.Level {
	case risk.OK:
		return st.OK.R("ok")
	case risk.Tight:
		return st.Warn.R("tight")
	case risk.WouldExceed:
		return st.Err.R("would exceed")
	}
	return st.Dim.R("n/a")
}

// forecastCheck is how a save's copy-on-write compares with the forecast
// made before it: the signed error of a calibrated forecast ("+12%"),
// whether an upper bound held ("within bound", "exceeded by 1.20 MiB": a
// bound is no estimate, and its distance to the actual no error); empty
// for a forkless forecast, or without both figures.
func ForecastCheck(r *source.SaveReport) string {
	fc, ok1 := r.ForecastCOW.Get()
	actual, ok2 := r.COW.Get()
	if !ok1 || !ok2 {
		return ""
	}
	switch forecast.Basis(r.ForecastBasis) {
	case forecast.Calibrated:
		if e, ok := forecast.Error(fc, actual); ok {
			return fmt.Sprintf("%+.0f%%", 100*e)
		}
	case forecast.Bound, forecast.Worst:
		if actual <= fc {
			return "within bound"
		}
		return "exceeded by " + text.Bytes(actual-fc)
	}
	return ""
}

// nextCell is the next save's forecast in a fleet row's save column: its
// copy-on-write, basis and headroom, "next ~38.7 MiB bound ok". (Not a
// metric-table column: those chart a field of each sample, and the
// forecast is the store's, from the node's history.)
func NextCell(st *style.Styles, v store.View) string {
	fc, ok := v.Forecast.Get()
	if !ok || fc.Basis == forecast.Forkless {
		return ""
	}
	return st.Label.R("next ") + st.Value.R("~"+text.Bytes(fc.COW)) + st.Dim.R(" "+ShortBasis(fc.Basis)) + " " + Level(st, Headroom(v, false))
}

// canCancel says whether the server has BGSAVE CANCEL: Valkey 8.1 and
// later. Redis answers it with a syntax error.
func CanCancel(v store.View) bool {
	name, version := serverVersion(v)
	if name != "valkey" {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimSpace(version), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 8 || major == 8 && minor >= 1
}

// serverVersion is the server's name and version as it last said them.
func serverVersion(v store.View) (name, version string) {
	if v.Identity != nil {
		name, version = v.Identity.ServerName, v.Identity.Version
	}
	if s := v.Latest; s != nil && s.Info.Version != "" {
		name, version = s.Info.ServerName, s.Info.Version
	}
	return name, version
}

// serverOf is " (this is NAME VERSION)" where the server said them.
func ServerOf(v store.View) string {
	name, version := serverVersion(v)
	if version == "" {
		return ""
	}
	if name == "" {
		name = "redis" // Valkey says server_name; Redis does not
	}
	return " (this is " + strings.TrimSpace(name+" "+version) + ")" // inert already: every event is made inert as it comes in
}

// forkRisk tells whether a fork on the server whose latest sample is s
// could run out of memory, as source/risk judges it from the copy-on-write
// its last forks needed (last is its latest save report, nil when none),
// and says so with the numbers. aof says the fork is an AOF rewrite's.
// It warns only when a limit would be exceeded: a tight fit is left to
// the user, as before.
//
// fc is the node's forecast (source/forecast), absent when none: the
// check then projects the larger of it and the last COW seen.
func ForkRisk(addr string, s *source.Sample, last *source.SaveReport, aof bool, fc ...source.Opt[forecast.Forecast]) (string, bool) {
	in := risk.Input{Sample: s, Last: last, AOF: aof}
	if len(fc) > 0 && !aof {
		// The forecast is of a BGSAVE; an AOF rewrite has its own cost.
		in.Forecast = forecast.RiskFigure(fc[0])
	}
	f := risk.Assess(in)
	if !f.Exceeds() {
		return "", false
	}
	return ForkWarning(addr, f), true
}

// ForkWarning is the sentence for a fork a limit would not hold: the
// projected footprint, what it is made of, and the limit named with its
// instrument. Empty when f exceeds nothing. The save command prints the
// same sentence.
func ForkWarning(addr string, f risk.Fork) string {
	c, ok := f.Decisive()
	if !ok || !f.Exceeds() {
		return ""
	}
	what, cow := forkName(f.AOF), cowName(f)
	switch c.Limit {
	case risk.LimitMemAvailable:
		return fmt.Sprintf("%s: %s may need %s more (%s) but only %s is available (MemAvailable)",
			addr, what, text.Bytes(c.Need), "its "+cow, text.Bytes(c.Cap.Bytes))
	case risk.LimitCgroup:
		return fmt.Sprintf("%s: %s may need %s (cgroup usage %s + %s %s) but the cgroup's limit is %s (%s)",
			addr, what, text.Bytes(c.Need), text.Bytes(c.Base.Bytes), cow, text.Bytes(f.COW.V.Bytes), text.Bytes(c.Cap.Bytes), c.Cgroup)
	case risk.LimitMaxMemory:
		return fmt.Sprintf("%s: %s may need %s (used %s + %s %s) but maxmemory is %s",
			addr, what, text.Bytes(c.Need), text.Bytes(c.Base.Bytes), cow, text.Bytes(f.COW.V.Bytes), text.Bytes(c.Cap.Bytes))
	case risk.LimitSystemMemory:
		return fmt.Sprintf("%s: %s may need %s (RSS %s + %s %s) but the host has %s in all (total_system_memory)",
			addr, what, text.Bytes(c.Need), text.Bytes(c.Base.Bytes), cow, text.Bytes(f.COW.V.Bytes), text.Bytes(c.Cap.Bytes))
	}
	return fmt.Sprintf("%s: %s may need %s but %s is %s", addr, what, text.Bytes(c.Need), c.Cap.From, text.Bytes(c.Cap.Bytes))
}

// cowName names the COW a warning projects: the last one seen, or a
// forecast when the forecast is the larger.
func cowName(f risk.Fork) string {
	if fc, ok := f.Forecast.Get(); ok && f.COW.V == fc {
		// "forecast (uniform bound)" -> "forecast COW (uniform bound)"
		return "forecast COW" + strings.TrimPrefix(fc.From, "forecast")
	}
	return "last COW"
}

// forkName names the fork in a warning.
func forkName(aof bool) string {
	if aof {
		return "an AOF rewrite (a fork)"
	}
	return "a fork save"
}

// optPause renders the fork pause; absent forkless (there is no fork).
func optPause(o source.Opt[time.Duration]) string {
	if !o.OK {
		return text.NA
	}
	return text.Latency(o.V)
}

// NoneShort is "none" where a figure says "none (why)" and the room is
// short: a table cell (its legend says why), a pane's field cut short.
func NoneShort(s string) string {
	if strings.HasPrefix(s, "none") {
		return "none"
	}
	return s
}
