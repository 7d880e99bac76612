package status

import (
	"fmt"

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

// Next is the next save's forecast, while no save runs: its
// copy-on-write and basis, the headroom against the decisive limit, the
// footprint, and what the forecast assumed.
func Next(st *style.Styles, v store.View) Block {
	b := Block{Title: st.Label.R("next save"), Short: st.Label.R("next save"), gutter: true}
	fc, ok := v.Forecast.Get()
	if !ok {
		b.note = st.Dim.R("forecast n/a: no used_memory yet")
		b.Short += " " + b.note
		return b
	}
	if fc.Basis == forecast.Forkless {
		b.Title += st.Value.R(" forkless") + st.Dim.R(" (if no module forces a fork): no child, no copy-on-write")
		b.Short = b.Title
		return b
	}
	val := st.Value.R
	cow := val("~"+text.Bytes(fc.COW)) + st.Dim.R(" "+words.Basis(fc.Basis)) + thpTag(st, v.Latest)
	if r := v.Report; r != nil && r.MethodNote != "" {
		// Forecast as a fork: the last save forked though the method
		// is forkless (rdb_current_bgsave_type is the truth).
		cow += st.Warn.R(" ⚠ the last save forked")
	}
	h := words.Headroom(v, false)
	room := words.Level(st, h)
	if c, ok := h.Decisive(); ok {
		room += st.Dim.R(fmt.Sprintf(" (%s of %s %s)", text.Bytes(c.Need), text.Bytes(c.Cap.Bytes), limitName(c)))
	}
	b.Fields = []Field{fieldOf(PrioCOW, "cow", cow).or(val("~"+text.Bytes(fc.COW)) + st.Dim.R(" "+words.ShortBasis(fc.Basis)) + thpTag(st, v.Latest)),
		fieldOf(PrioHeadroom, "headroom", room).or(words.Level(st, h))}
	if fp, ok := fc.Footprint.Get(); ok {
		b.Fields = append(b.Fields, fieldOf(PrioMore, "footprint", val(text.Bytes(fp))))
	}
	// What the forecast assumed, last: the first to go.
	if fc.Bound.OK && fc.Basis == forecast.Calibrated {
		b.Fields = append(b.Fields, fieldOf(PrioMore, "bound", val(text.Bytes(fc.Bound.V))))
	}
	b.Fields = append(b.Fields, fieldOf(PrioMore, "worst", val(text.Bytes(fc.Worst))))
	if r, ok := fc.Rate.Get(); ok {
		b.Fields = append(b.Fields, fieldOf(PrioMore, "writes", val(text.Rate(r)+"/s")))
	}
	b.Fields = append(b.Fields, fieldOf(PrioMore, "lasting", val(text.Elapsed(fc.Duration))+st.Dim.R(" ("+fc.DurationFrom+")")).
		or(val(text.Elapsed(fc.Duration))))
	if cause, ok := thpCause(v.Latest); ok {
		b.Fields = append(b.Fields, fieldOf(PrioMore, "huge pages", st.Warn.R(cause+": a write copies 2 MiB, not 4 KiB")))
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
func forecastFields(st *style.Styles, r *source.SaveReport) []Field {
	fc, ok := r.ForecastCOW.Get()
	if !ok {
		return nil
	}
	out := []Field{fieldOf(PrioForecast, "forecast", st.Value.R(text.Bytes(fc))+st.Dim.R(" "+words.Basis(forecast.Basis(r.ForecastBasis))))}
	if c := words.ForecastCheck(r); c != "" {
		out = append(out, fieldOf(PrioForecast, "vs actual", st.Value.R(c)))
	}
	return out
}

// stuckText is the badge of a save that looks stuck, and what to do.
func stuckText(st *style.Styles, v store.View) string {
	out := st.Err.R("⚠ stuck? ") + st.Value.R(v.Stuck)
	if words.CanCancel(v) {
		out += st.Dim.R(" · x cancels it (BGSAVE CANCEL)")
	}
	return out
}

// replBufFields are the replica output buffer during a replica's full
// sync, beside the save's copy-on-write (the host pays it too): "repl buf
// 3.1 MiB of 256 MiB mem_clients_slaves", and its soft limit; none when
// no full sync runs or the server does not say.
func replBufFields(st *style.Styles, s *source.Sample) []Field {
	b, ok := forecast.FullSyncBuffer(s)
	if !ok {
		return nil
	}
	v := st.Value.R(text.Bytes(b.Used))
	if lim, ok := b.Limit(); ok {
		v += st.Label.R(" of ") + st.Value.R(text.Bytes(lim))
	} else if !b.Hard.OK {
		v += st.Dim.R(" (limit n/a)")
	}
	out := []Field{fieldOf(PrioCOW, "repl buf", v+st.Dim.R(" mem_clients_slaves"))}
	if soft, ok := b.Soft.Get(); ok && soft > 0 && b.Hard.V > 0 {
		out = append(out, fieldOf(PrioMore, "soft limit", st.Value.R(text.Bytes(soft))+st.Label.R(" for ")+st.Value.R(fmt.Sprintf("%ds", b.SoftSecs.V))))
	}
	return out
}

// thpTag warns, beside a forecast copy-on-write counted in 4 KiB pages,
// where transparent huge pages can back the server's heap: one write then
// copies 2 MiB (thpCause says why, in a field of its own). Empty where
// they cannot, or /proc and /sys were not read.
func thpTag(st *style.Styles, s *source.Sample) string {
	if _, ok := thpCause(s); ok {
		return st.Warn.R(" ⚠ 2 MiB pages")
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
