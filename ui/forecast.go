package ui

import (
	"fmt"
	"strings"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The forecast's sentences: the numbers and the rules are source/forecast's
// and source/risk's; this file only says them.

// forecastLine is the next save's forecast, for the line under a pane's
// save line while no save runs: its copy-on-write and basis, the rate
// and duration it assumed, the footprint, and the headroom against the
// decisive limit.
func forecastLine(st *style.Styles, v store.View, compact bool) string {
	fc, ok := v.Forecast.Get()
	if !ok {
		return st.Label.R("next save ") + st.Dim.R("forecast n/a: no used_memory yet")
	}
	sep := st.Dim.R(" · ")
	if fc.Basis == forecast.Forkless {
		return st.Label.R("next save ") + st.Value.R("forkless") + st.Dim.R(" (if no module forces a fork): no child, no copy-on-write")
	}
	basis, thp := words.Basis(fc.Basis), thpTag(st, v.Latest, compact)
	if compact && thp != "" {
		basis = words.ShortBasis(fc.Basis) // room for the warning, not at the headroom's cost
	}
	out := st.Label.R("next save cow ") + st.Value.R("~"+text.Bytes(fc.COW)) + st.Dim.R(" "+basis) + thp
	if r := v.Report; r != nil && r.MethodNote != "" {
		// Forecast as a fork: the last save forked though the method
		// is forkless (rdb_current_bgsave_type is the truth).
		out += st.Warn.R(" ⚠ the last save forked (method forkless)")
	}
	if fp, ok := fc.Footprint.Get(); ok {
		out += sep + st.Label.R("footprint ") + st.Value.R(text.Bytes(fp))
	}
	h := words.Headroom(v, false)
	out += sep + st.Label.R("headroom ") + words.Level(st, h)
	if c, ok := h.Decisive(); ok && !compact {
		out += st.Dim.R(fmt.Sprintf(" (%s of %s %s)", text.Bytes(c.Need), text.Bytes(c.Cap.Bytes), limitName(c)))
	}
	if compact {
		return out
	}
	// What the forecast assumed, last: the first thing cut.
	if r, ok := fc.Rate.Get(); ok {
		out += sep + st.Dim.R(fmt.Sprintf("%s/s for %s (%s)", text.Rate(r), text.Elapsed(fc.Duration), fc.DurationFrom))
	}
	if fc.Bound.OK && fc.Basis == forecast.Calibrated {
		out += st.Label.R(" bound ") + st.Value.R(text.Bytes(fc.Bound.V))
	}
	out += sep + st.Label.R("worst ") + st.Value.R(text.Bytes(fc.Worst))
	return out
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

// forecastVsActual is a report's forecast beside its actual copy-on-write,
// with the error, after sep; empty when no forecast was made before the
// save.
func forecastVsActual(st *style.Styles, r *source.SaveReport, sep string) string {
	fc, ok := r.ForecastCOW.Get()
	if !ok {
		return ""
	}
	out := sep + st.Label.R("forecast cow ") + st.Value.R(text.Bytes(fc)) + st.Dim.R(" "+words.Basis(forecast.Basis(r.ForecastBasis)))
	if r.COW.OK {
		out += st.Label.R(" vs ") + st.Value.R(words.COW(r))
		if c := words.ForecastCheck(r); c != "" {
			out += st.Label.R(" ") + st.Value.R(c)
		}
	}
	return out
}

// stuckLine is the badge of a save that looks stuck, and what to do.
func stuckLine(st *style.Styles, v store.View) string {
	out := st.Err.R("⚠ stuck? ") + st.Value.R(v.Stuck)
	if words.CanCancel(v) {
		out += st.Dim.R(" · x cancels it (BGSAVE CANCEL)")
	}
	return out
}

// compactForecast is a report's forecast error in a few cells, for a
// compact pane's last-save line: " fc +12%".
func compactForecast(st *style.Styles, r *source.SaveReport) string {
	if c := words.ForecastCheck(r); c != "" {
		return st.Label.R(" fc ") + st.Value.R(c)
	}
	return ""
}

// stuckPrefix starts the footer line of a stuck save.
const stuckPrefix = "⚠ stuck? "

// stuckFooter keeps a node's footer line about a stuck save in step with
// its view: shown (and its seconds updated) while the save looks stuck,
// gone when it moves again or ends. Other footer lines are left alone.
func (m *Model) stuckFooter(id source.NodeID) {
	v := m.store.Live(id)
	if v.Stuck != "" {
		text := stuckPrefix + "the save on " + m.addrOf(id) + ": " + v.Stuck
		if words.CanCancel(v) {
			text += "; x cancels it (BGSAVE CANCEL)"
		}
		m.setFooter(footEntry{node: id, kind: footErr, text: text})
		return
	}
	for i, e := range m.footer {
		if e.node == id && strings.HasPrefix(e.text, stuckPrefix) {
			m.footer = append(m.footer[:i], m.footer[i+1:]...)
			return
		}
	}
}

// replBufText is the replica output buffer during a replica's full sync,
// for beside the save's copy-on-write: "repl buf 3.1 MiB of 256 MiB
// (mem_clients_slaves)"; empty when no full sync runs or the server does
// not say. The compact form drops the instrument.
func replBufText(st *style.Styles, s *source.Sample, compact bool) string {
	b, ok := forecast.FullSyncBuffer(s)
	if !ok {
		return ""
	}
	out := st.Label.R("repl buf ") + st.Value.R(text.Bytes(b.Used))
	lim, limOK := b.Limit()
	if compact {
		if limOK {
			out += st.Dim.R("/") + st.Value.R(text.Bytes(lim))
		}
		return out
	}
	if limOK {
		out += st.Label.R(" of ") + st.Value.R(text.Bytes(lim))
	}
	if soft, ok := b.Soft.Get(); ok && soft > 0 && b.Hard.V > 0 {
		out += st.Dim.R(fmt.Sprintf(" (soft %s for %ds)", text.Bytes(soft), b.SoftSecs.V))
	} else if !b.Hard.OK {
		out += st.Dim.R(" (limit n/a)")
	}
	return out + st.Dim.R(" mem_clients_slaves")
}

// thpTag warns, beside a forecast copy-on-write counted in 4 KiB pages,
// where transparent huge pages can back the server's heap: one write then
// copies 2 MiB. Empty where they cannot, or /proc and /sys were not read.
func thpTag(st *style.Styles, s *source.Sample, compact bool) string {
	if s == nil {
		return ""
	}
	cause, ok := forecast.THPOf(s).Cause(s.Config.DisableTHP)
	if !ok {
		return ""
	}
	if compact {
		return st.Warn.R(" ⚠ 2 MiB pages")
	}
	return st.Warn.R(" ⚠ huge pages (" + cause + "): a write copies 2 MiB, not 4 KiB")
}
