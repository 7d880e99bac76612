package ui

import (
	"fmt"
	"strings"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/store"
)

// The forecast's sentences: the numbers and the rules are source/forecast's
// and source/risk's; this file only says them.

// headroom is the memory check of the next fork save of a node's view,
// with its forecast copy-on-write in the check.
func headroom(v store.View, aof bool) risk.Fork {
	return risk.Assess(risk.Input{Sample: v.Latest, Last: v.Report, AOF: aof, Forecast: forecast.RiskFigure(v.Forecast)})
}

// basisWords are each basis's words: in a few cells, and in a table cell.
var basisWords = map[forecast.Basis][2]string{
	forecast.Calibrated: {"calibrated", "cal"},
	forecast.Bound:      {"upper bound", "bound"},
	forecast.Worst:      {"worst case", "worst"},
}

// basisTag is the forecast's basis in a few cells.
func basisTag(b forecast.Basis) string {
	if w, ok := basisWords[b]; ok {
		return w[0]
	}
	return string(b)
}

// levelText is a headroom level as a word and its style.
func levelText(st *styles, f risk.Fork) string {
	switch f.Level {
	case risk.OK:
		return st.ok.r("ok")
	case risk.Tight:
		return st.warn.r("tight")
	case risk.WouldExceed:
		return st.err.r("would exceed")
	}
	return st.dim.r("n/a")
}

// nextBlock is the next save's forecast, while no save runs: its
// copy-on-write and basis, the headroom against the decisive limit, the
// footprint, and what the forecast assumed.
func nextBlock(st *styles, v store.View) block {
	b := block{title: st.label.r("next save"), short: st.label.r("next save"), gutter: true}
	fc, ok := v.Forecast.Get()
	if !ok {
		b.note = st.dim.r("forecast n/a: no used_memory yet")
		b.short += " " + b.note
		return b
	}
	if fc.Basis == forecast.Forkless {
		b.title += st.value.r(" forkless") + st.dim.r(" (if no module forces a fork): no child, no copy-on-write")
		b.short = b.title
		return b
	}
	val := st.value.r
	cow := val("~"+fmtBytes(fc.COW)) + st.dim.r(" "+basisTag(fc.Basis)) + thpTag(st, v.Latest)
	if r := v.Report; r != nil && r.MethodNote != "" {
		// Forecast as a fork: the last save forked though the method
		// is forkless (rdb_current_bgsave_type is the truth).
		cow += st.warn.r(" ⚠ the last save forked")
	}
	h := headroom(v, false)
	room := levelText(st, h)
	if c, ok := h.Decisive(); ok {
		room += st.dim.r(fmt.Sprintf(" (%s of %s %s)", fmtBytes(c.Need), fmtBytes(c.Cap.Bytes), limitName(c)))
	}
	b.fields = []field{fieldOf(prioCOW, "cow", cow).or(val("~"+fmtBytes(fc.COW)) + st.dim.r(" "+shortBasis(fc.Basis)) + thpTag(st, v.Latest)),
		fieldOf(prioHeadroom, "headroom", room).or(levelText(st, h))}
	if fp, ok := fc.Footprint.Get(); ok {
		b.fields = append(b.fields, fieldOf(prioMore, "footprint", val(fmtBytes(fp))))
	}
	// What the forecast assumed, last: the first to go.
	if fc.Bound.OK && fc.Basis == forecast.Calibrated {
		b.fields = append(b.fields, fieldOf(prioMore, "bound", val(fmtBytes(fc.Bound.V))))
	}
	b.fields = append(b.fields, fieldOf(prioMore, "worst", val(fmtBytes(fc.Worst))))
	if r, ok := fc.Rate.Get(); ok {
		b.fields = append(b.fields, fieldOf(prioMore, "writes", val(fmtRate(r)+"/s")))
	}
	b.fields = append(b.fields, fieldOf(prioMore, "lasting", val(fmtElapsed(fc.Duration))+st.dim.r(" ("+fc.DurationFrom+")")).
		or(val(fmtElapsed(fc.Duration))))
	if cause, ok := thpCause(v.Latest); ok {
		b.fields = append(b.fields, fieldOf(prioMore, "huge pages", st.warn.r(cause+": a write copies 2 MiB, not 4 KiB")))
	}
	return b
}

// limitName names a limit briefly; the remote ones say they are weaker.
func limitName(c risk.Check) string {
	switch c.Limit {
	case risk.LimitMemAvailable:
		return "MemAvailable"
	case risk.LimitCgroup:
		return "cgroup limit"
	case risk.LimitMaxMemory:
		return "maxmemory"
	case risk.LimitSystemMemory:
		return "total_system_memory, remote: weaker"
	}
	return string(c.Limit)
}

// forecastFields are a report's forecast and how the actual
// copy-on-write compares with it; none when no forecast was made before
// the save.
func forecastFields(st *styles, r *source.SaveReport) []field {
	fc, ok := r.ForecastCOW.Get()
	if !ok {
		return nil
	}
	out := []field{fieldOf(prioForecast, "forecast", st.value.r(fmtBytes(fc))+st.dim.r(" "+basisTag(forecast.Basis(r.ForecastBasis))))}
	if c := forecastCheck(r); c != "" {
		out = append(out, fieldOf(prioForecast, "vs actual", st.value.r(c)))
	}
	return out
}

// forecastCheck is how a save's copy-on-write compares with the forecast
// made before it: the signed error of a calibrated forecast ("+12%"),
// whether an upper bound held ("within bound", "exceeded by 1.20 MiB": a
// bound is no estimate, and its distance to the actual no error); empty
// for a forkless forecast, or without both figures.
func forecastCheck(r *source.SaveReport) string {
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
		return "exceeded by " + fmtBytes(actual-fc)
	}
	return ""
}

// stuckText is the badge of a save that looks stuck, and what to do.
func stuckText(st *styles, v store.View) string {
	out := st.err.r("⚠ stuck? ") + st.value.r(v.Stuck)
	if canCancel(v) {
		out += st.dim.r(" · x cancels it (BGSAVE CANCEL)")
	}
	return out
}

// canCancel says whether the server has BGSAVE CANCEL: Valkey 8.1 and
// later. Redis answers it with a syntax error.
func canCancel(v store.View) bool {
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
func serverOf(v store.View) string {
	name, version := serverVersion(v)
	if version == "" {
		return ""
	}
	if name == "" {
		name = "redis" // Valkey says server_name; Redis does not
	}
	return " (this is " + strings.TrimSpace(name+" "+version) + ")" // inert already: every event is made inert as it comes in
}

// stuckPrefix starts the footer line of a stuck save.
const stuckPrefix = "⚠ stuck? "

// stuckFooter keeps a node's footer line about a stuck save in step with
// its view: shown (and its seconds updated) while the save looks stuck,
// gone when it moves again or ends. Other footer lines are left alone.
func (m *Model) stuckFooter(id source.NodeID) {
	v := m.store.Live(id)
	// Only while the latest sample shows the save: a sample older than
	// it, folded later, can leave the forecast's verdict on a save that
	// has ended.
	if v.Stuck != "" && v.Latest != nil && v.Latest.Save != nil {
		text := stuckPrefix + "the save on " + m.addrOf(id) + ": " + v.Stuck
		if canCancel(v) {
			text += "; x cancels it (BGSAVE CANCEL)"
		}
		e := footEntry{node: id, kind: footErr, text: text}
		for _, old := range m.footer {
			if old.node == id && strings.HasPrefix(old.text, stuckPrefix) {
				e.wall = old.wall // since when it looks stuck
			}
		}
		m.setFooter(e)
		return
	}
	for i, e := range m.footer {
		if e.node == id && strings.HasPrefix(e.text, stuckPrefix) {
			m.footer = append(m.footer[:i], m.footer[i+1:]...)
			return
		}
	}
}

// shortBasis is a basis for a table cell.
func shortBasis(b forecast.Basis) string {
	if w, ok := basisWords[b]; ok {
		return w[1]
	}
	return string(b)
}

// nextCell is the next save's forecast in a fleet row's save column: its
// copy-on-write, basis and headroom, "next ~38.7 MiB bound ok". (Not a
// metric-table column: those chart a field of each sample, and the
// forecast is the store's, from the node's history.)
func nextCell(st *styles, v store.View) string {
	fc, ok := v.Forecast.Get()
	if !ok || fc.Basis == forecast.Forkless {
		return ""
	}
	return st.label.r("next ") + st.value.r("~"+fmtBytes(fc.COW)) + st.dim.r(" "+shortBasis(fc.Basis)) + " " + levelText(st, headroom(v, false))
}

// replBufFields are the replica output buffer during a replica's full
// sync, beside the save's copy-on-write (the host pays it too): "repl buf
// 3.1 MiB of 256 MiB mem_clients_slaves", and its soft limit; none when
// no full sync runs or the server does not say.
func replBufFields(st *styles, s *source.Sample) []field {
	b, ok := forecast.FullSyncBuffer(s)
	if !ok {
		return nil
	}
	v := st.value.r(fmtBytes(b.Used))
	if lim, ok := b.Limit(); ok {
		v += st.label.r(" of ") + st.value.r(fmtBytes(lim))
	} else if !b.Hard.OK {
		v += st.dim.r(" (limit n/a)")
	}
	out := []field{fieldOf(prioCOW, "repl buf", v+st.dim.r(" mem_clients_slaves"))}
	if soft, ok := b.Soft.Get(); ok && soft > 0 && b.Hard.V > 0 {
		out = append(out, fieldOf(prioMore, "soft limit", st.value.r(fmtBytes(soft))+st.label.r(" for ")+st.value.r(fmt.Sprintf("%ds", b.SoftSecs.V))))
	}
	return out
}

// thpTag warns, beside a forecast copy-on-write counted in 4 KiB pages,
// where transparent huge pages can back the server's heap: one write then
// copies 2 MiB (thpCause says why, in a field of its own). Empty where
// they cannot, or /proc and /sys were not read.
func thpTag(st *styles, s *source.Sample) string {
	if _, ok := thpCause(s); ok {
		return st.warn.r(" ⚠ 2 MiB pages")
	}
	return ""
}

// thpCause is why transparent huge pages can back the server's heap.
func thpCause(s *source.Sample) (string, bool) {
	if s == nil {
		return "", false
	}
	return forecast.THPOf(s).Cause(s.Config.DisableTHP)
}
