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
	if m, ok := v.Methods.Get(); ok && m.Fork.OK {
		b.Fields = bothWays(st, v, m)
		return b
	}
	if fc.Basis == forecast.Forkless {
		b.Title += st.Value.R(" forkless") + st.Dim.R(" (if no module forces a fork): no child, no copy-on-write")
		b.Short = b.Title
		return b
	}
	cow := st.Value.R("~"+text.Bytes(fc.COW)) + st.Dim.R(" "+words.Basis(fc.Basis)) + thpTag(st, v.Latest)
	if r := v.Report; r != nil && r.MethodNote != "" {
		// Forecast as a fork: the last save forked though the method
		// is forkless (rdb_current_bgsave_type is the truth).
		cow += st.Warn.R(" ⚠ the last save forked")
	}
	b.Fields = append([]Field{fieldOf(PrioCOW, "cow", cow).or(st.Value.R("~"+text.Bytes(fc.COW)) + st.Dim.R(" "+words.ShortBasis(fc.Basis)) + thpTag(st, v.Latest))},
		forkFields(st, v, fc)...)
	return b
}

// forkFields are a fork forecast's fields after its copy-on-write: the
// headroom against the decisive limit, the footprint, what the forecast
// assumed and how long the save will last.
func forkFields(st *style.Styles, v store.View, fc forecast.Forecast) []Field {
	val := st.Value.R
	h := words.Headroom(v, false)
	room := words.Level(st, h)
	if c, ok := h.Decisive(); ok {
		room += st.Dim.R(fmt.Sprintf(" (%s of %s %s)", text.Bytes(c.Need), text.Bytes(c.Cap.Bytes), limitName(c)))
	}
	fs := []Field{fieldOf(PrioHeadroom, "headroom", room).or(words.Level(st, h))}
	if fp, ok := fc.Footprint.Get(); ok {
		fs = append(fs, fieldOf(PrioMore, "footprint", val(text.Bytes(fp))))
	}
	// What the forecast assumed, last: the first to go.
	if fc.Bound.OK && fc.Basis == forecast.Calibrated {
		fs = append(fs, fieldOf(PrioMore, "bound", val(text.Bytes(fc.Bound.V))))
	}
	fs = append(fs, fieldOf(PrioMore, "worst", val(text.Bytes(fc.Worst))))
	if r, ok := fc.Rate.Get(); ok {
		fs = append(fs, fieldOf(PrioMore, "writes", val(text.Rate(r)+"/s")))
	}
	fs = append(fs, fieldOf(PrioMore, "lasting", val(text.Elapsed(fc.Duration))+st.Dim.R(" ("+fc.DurationFrom+")")).
		or(val(text.Elapsed(fc.Duration))))
	if cause, ok := thpCause(v.Latest); ok {
		fs = append(fs, fieldOf(PrioMore, "huge pages", st.Warn.R(cause+": a write copies 2 MiB, not 4 KiB")))
	}
	return fs
}

// bothWays are the next save's fields on a server that can save both
// ways (issue 39): a field for each method side by side, fork then
// forkless, first; then the fork side's headroom and what it assumed.
// The fork side is a fork's forecast whatever the method set; the
// forkless side is the node's last forkless save's speed on today's
// keys, and the writers it blocked at the write rate then, or
// forecast.NoForklessYet before one: nothing is assumed.
func bothWays(st *style.Styles, v store.View, m store.Methods) []Field {
	val, dim := st.Value.R, st.Dim.R
	fc := m.Fork.V
	thp := thpTag(st, v.Latest)
	fork := fieldOf(PrioCOW, "fork", val("~"+text.Bytes(fc.COW))+dim(" cow "+words.Basis(fc.Basis))+thp+dim(" · ")+val(text.Elapsed(fc.Duration))).
		or(val("~"+text.Bytes(fc.COW)) + dim(" cow") + thp + dim(" · ") + val(text.Elapsed(fc.Duration)))
	var forced string
	if r := v.Report; r != nil && r.MethodNote != "" {
		// The last save forked though the method was forkless: a
		// module forces it, and may again.
		forced = st.Warn.R(" ⚠ the last save forked")
	}
	forkless := fieldOf(PrioCOW, "forkless", dim(forecast.NoForklessYet)+forced)
	if f, ok := m.Forkless.Get(); ok {
		head := dim("no cow · ") + val("~"+text.Elapsed(f.Duration))
		blocked, short := "", ""
		if n, ok := f.Blocked.Get(); ok {
			blocked = dim(" · ") + val(fmt.Sprint(n)) + dim(" writers blocked")
			short = dim(" · ") + val(fmt.Sprint(n)) + dim(" blocked")
			if r, ok := f.BlockedAtRate.Get(); ok {
				at := dim(" at ") + val(text.Rate(r)+"/s")
				blocked, short = blocked+at, short+at
			}
		}
		forkless = fieldOf(PrioCOW, "forkless", head+dim(" ("+f.DurationFrom+")")+blocked+forced).
			or(head + short + forced)
	}
	fs := []Field{fork, forkless}
	// The fork side's headroom is a fork's, whatever the method set.
	fv := store.View{Latest: v.Latest, Report: v.Report, Forecast: m.Fork}
	if v.Latest != nil {
		s := *v.Latest
		s.Config.Method = "fork"
		fv.Latest = &s
	}
	// Its duration is in its field: not a second time.
	for _, f := range forkFields(st, fv, fc) {
		if f.Label != "lasting" {
			fs = append(fs, f)
		}
	}
	return fs
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
