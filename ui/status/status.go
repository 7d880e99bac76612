package status

import (
	"fmt"

	"github.com/charmbracelet/bubbles/progress"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

// StateLine says how the server is connected, how its PINGs went over the
// last 10 s and how it saves, in width cells: the PING's p50, then how it
// saves, then its max go first where they do not fit.
func StateLine(st *style.Styles, v store.View, width int) string {
	var conn string
	switch v.State {
	case store.Connecting:
		conn = st.Warn.R("connecting…")
	case store.Connected:
		conn = st.OK.R("connected")
	case store.Disconnected:
		conn = st.Err.R("✗ disconnected: " + text.OrNA(v.Reason) + ", retrying")
	}
	s := v.Latest
	parts := []text.Part{{Text: conn + st.Dim.R(" · ") + st.Series[plot.PingChart].R("ping 10s")}}
	if s == nil || s.Ping10s.Count == 0 {
		parts = append(parts, text.Part{Text: st.Value.R(text.NA)})
		if s != nil && s.Ping.InFlight > 0 {
			parts = append(parts, text.Part{Text: st.Warn.R("in flight " + text.Latency(s.Ping.InFlight))})
		}
	} else {
		l := s.Ping10s
		parts = append(parts, text.Part{Text: st.Label.R("p50 ") + st.Value.R(text.Latency(l.P50)), Rank: 3},
			text.Part{Text: st.Label.R("p99 ") + st.Value.R(text.Latency(l.P99))},
			text.Part{Text: st.Label.R("max ") + st.Value.R(text.Latency(l.Max)), Rank: 1})
		// The PING in flight now (the sample's, in Ping).
		if s.Ping.InFlight > l.Max {
			parts = append(parts, text.Part{Text: st.Warn.R("in flight " + text.Latency(s.Ping.InFlight))})
		}
	}
	parts = append(parts, text.Part{Text: st.Dim.R("·") + " " + saveMethod(st, s), Rank: 2})
	return text.FitParts(width, " ", parts...)
}

// saveMethod says how the server saves: bgsave-default-method and
// whether it could save forkless (forkless-infrastructure-enabled), or,
// on a server without them (Redis, Valkey before 9.2), that it saves by
// fork only.
func saveMethod(st *style.Styles, s *source.Sample) string {
	switch {
	case s == nil:
		return st.Label.R("save method ") + st.Value.R(text.NA)
	case s.Config.Err != "":
		return st.Label.R("save method ") + st.Value.R(text.NA) + st.Warn.R(" (CONFIG GET: "+s.Config.Err+")")
	case s.Config.Method == "" && !s.Config.ForklessInfra.OK:
		return st.Label.R("saves by ") + st.Value.R("fork") + st.Label.R(" only")
	case s.Config.Method == "forkless":
		return st.Label.R("saves ") + st.Value.R("forkless")
	}
	out := st.Label.R("saves by ") + st.Value.R(text.OrNA(s.Config.Method))
	if on, ok := s.Config.ForklessInfra.Get(); ok && on {
		out += st.Label.R(" (forkless ready)")
	}
	return out
}

// Save is the running save: what runs and who started it, its
// progress bar after the title, and its fields. The keys processed /
// total come right after the progress: they are what the bar measures.
func Save(st *style.Styles, prog progress.Model, v store.View) Block {
	s := v.Latest
	sv := s.Save
	kind := st.Warn.R("▶ "+string(sv.Kind)) + forcedFork(st, s)
	b := Block{
		Title: kind + st.Label.R(" by ") + st.Value.R(words.Trigger(sv.Trigger)),
		Short: kind,
	}
	frac, fok := sv.Fraction().Get()
	switch {
	case fok:
		b.Fields = append(b.Fields, fieldOf(PrioProgress, "progress", st.Value.R(fmt.Sprintf("%.1f%%", frac*100))))
	case sv.Kind != source.SaveForklessSync: // a sync has no total: its keys say so
		b.Fields = append(b.Fields, fieldOf(PrioProgress, "progress", st.Value.R(text.NA)))
	}
	b.Fields = append(b.Fields, fieldOf(PrioKeys, "keys", st.Value.R(KeysText(sv))), etaField(st, sv))
	// A forkless save's cost is the writers it holds up, not its
	// copy-on-write (none): they come first.
	blocked, bok := blockedNow(st, s)
	if bok && blocked.Prio == PrioCOW {
		b.Fields = append(b.Fields, blocked)
	}
	b.Fields = append(b.Fields, cowNowField(st, s))
	b.Fields = append(b.Fields, replBufFields(st, s)...)
	b.Fields = append(b.Fields, fieldOf(PrioMore, "elapsed", st.Value.R(text.Elapsed(sv.Elapsed))))
	if bok && blocked.Prio != PrioCOW {
		b.Fields = append(b.Fields, blocked)
	}
	if s.Info.AOFRewriteScheduled.V == 1 && sv.Kind != source.SaveAOF {
		// aof_rewrite_scheduled: the rewrite runs when the save ends.
		b.Fields = append(b.Fields, fieldOf(PrioMore, "AOF rewrite", st.Warn.R("waiting")))
	}
	if v.Stuck != "" {
		b.Short = st.Err.R("⚠ stuck? ") + kind
		b.extra, b.extraInline = func(int) string { return stuckText(st, v) }, true
		return b
	}
	b.extraInline = true
	b.extra = func(room int) string {
		switch {
		case fok && room >= minBar:
			prog.Width = room
			return prog.ViewAs(frac)
		case fok:
			return ""
		case sv.Kind == source.SaveForklessSync:
			return st.Dim.R("a replica's full sync without a fork: keys sent, no total")
		}
		return st.Dim.R("progress n/a: the server reports no key counts")
	}
	return b
}

// etaField is a running save's ETA, or the phase it is in where it has
// none (starting, writing its file, stopping after a cancel): never an
// ETA below zero, nor a missing one without saying why.
func etaField(st *style.Styles, sv *source.SaveProgress) Field {
	switch {
	case sv.Phase != "":
		return fieldOf(PrioETA, "phase", st.Warn.R(sv.Phase))
	case sv.Kind == source.SaveForklessSync:
		return fieldOf(PrioETA, "ETA", st.Dim.R("none (a sync has no total)"))
	}
	return fieldOf(PrioETA, "ETA", st.Value.R(text.OptElapsed(sv.ETA)))
}

// cowNowField is the running save's copy-on-write now and its
// instrument.
func cowNowField(st *style.Styles, s *source.Sample) Field {
	v := st.Value.R(liveCOW(s))
	if s.Save.Kind.Method() != "forkless" && s.COW.OK {
		tag, _ := plot.Charts[plot.COWChart].From(s)
		v += instrumentTag(st, tag != "", source.Instrument(tag))
	}
	return fieldOf(PrioCOW, "cow", v).or(st.Value.R(words.NoneShort(liveCOW(s))))
}

// KeysText is a save's keys processed of its total; a sync has no total.
func KeysText(sv *source.SaveProgress) string {
	if sv.Kind == source.SaveForklessSync {
		return text.OptCount(sv.Processed) + " (a sync: no total)"
	}
	return text.OptCount(sv.Processed) + "/" + text.OptCount(sv.Total)
}

// liveCOW is the running save's copy-on-write: none for a forkless save
// (no child), else the instrument's figure.
func liveCOW(s *source.Sample) string {
	if s.Save != nil && s.Save.Kind.Method() == "forkless" {
		return "none (no child)"
	}
	return text.OptBytes(s.COW)
}

// forcedFork calls out a fork while bgsave-default-method is forkless.
func forcedFork(st *style.Styles, s *source.Sample) string {
	if s != nil && source.ForcedFork(s) {
		return st.Warn.R(" ⚠ forked, method forkless")
	}
	return ""
}

// blockedNow is blocked_clients during a save: the writers a forkless
// save holds up (and any BLPOP), ranked with the copy-on-write a fork
// save costs instead. A fork save blocks no writer: its field shows only
// where some client is blocked, never "0".
func blockedNow(st *style.Styles, s *source.Sample) (Field, bool) {
	v, ok := s.Info.BlockedClients.Get()
	forkless := s.Save.Kind.Method() == "forkless"
	if !ok || v == 0 && !forkless {
		return Field{}, false
	}
	return fieldOf(blockedPrio(forkless), "blocked clients", st.Value.R(fmt.Sprint(v))), true
}

// blockedPrio is where writers held up rank: with the copy-on-write for
// a forkless save (its cost), with the fork pause otherwise.
func blockedPrio(forkless bool) Prio {
	if forkless {
		return PrioCOW
	}
	return PrioPause
}

// PeakAt renders " at 62%", or nothing where the peak's progress is
// not known (source.SaveReport.PeakProgress).
func PeakAt(r *source.SaveReport) string {
	if f, ok := r.PeakProgress().Get(); ok {
		return fmt.Sprintf(" at %.0f%%", f*100)
	}
	return ""
}

// beforeDuring is the legend of the fields that read "a → b".
const beforeDuring = "a → b: before → during"

// Report is what the last save cost: its kind, trigger and how it
// ended in the title, its figures as fields.
func Report(st *style.Styles, r *source.SaveReport) Block {
	if r == nil {
		return Block{Title: st.Label.R("last save ") + st.Dim.R("none yet"), Short: st.Label.R("last save ") + st.Dim.R("none yet"),
			note: st.Dim.R("when a save ends: its cost, ops/s and PING before → during")}
	}
	kind := st.Value.R(string(r.Kind)) + noteTag(st, r)
	b := Block{
		Title: st.Label.R("last save ") + kind + st.Label.R(" by ") + st.Value.R(words.Trigger(r.Trigger)) +
			st.Dim.R(" · ") + words.Status(st, r),
		Short: st.Label.R("last ") + kind + " " + words.Status(st, r),
		extra: func(room int) string {
			if room >= len(beforeDuring) {
				return st.Dim.R(beforeDuring)
			}
			return ""
		},
	}
	b.Fields = reportFields(st, r)
	return b
}

// reportFields are a save report's figures, in reading order.
func reportFields(st *style.Styles, r *source.SaveReport) []Field {
	val := st.Value.R
	var fs []Field
	// What a forkless save costs in place of copy-on-write: the writers
	// it held up, first. A fork save blocks none: its 0 is shown only if
	// not 0, after the fork pause.
	forkless := r.Kind.Method() == "forkless"
	b, bok := r.BlockedWriters().Get()
	blocked := fieldOf(blockedPrio(forkless), "blocked writers", val(fmt.Sprint(b)))
	bok = bok && (b > 0 || forkless)
	if bok && forkless {
		fs = append(fs, blocked)
	}
	fs = append(fs,
		fieldOf(PrioCOW, "cow", val(words.COW(r))).or(val(words.NoneShort(words.COW(r)))),
		fieldOf(PrioDuration, "took", val(words.ServerSecs(r.ServerSeconds))+st.Dim.R(" server")).or(val(words.ServerSecs(r.ServerSeconds))),
		fieldOf(PrioDuration, "observed", val(words.Observed(r))),
		fieldOf(PrioPause, "fork pause", val(words.Pause(r))).or(val(words.NoneShort(words.Pause(r)))))
	if bok && !forkless {
		fs = append(fs, blocked)
	}
	worst := func(l source.Latency) string {
		if l.Count > 0 {
			return text.Latency(l.Max)
		}
		return text.NA
	}
	fs = append(fs, fieldOf(PrioPing, "ping max", val(worst(r.PingBefore))+st.Label.R(" → ")+val(worst(r.PingDuring))),
		fieldOf(PrioOps, "ops/s", val(text.OptRate(r.OpsBefore))+st.Label.R(" → ")+val(text.OptRate(r.OpsDuring))))
	if r.WriterOpsBefore.OK || r.WriterOpsDuring.OK {
		fs = append(fs, fieldOf(PrioOps, "writers/s", val(text.OptRate(r.WriterOpsBefore))+st.Label.R(" → ")+val(text.OptRate(r.WriterOpsDuring))))
	}
	fs = append(fs, forecastFields(st, r)...)
	if r.COWFrom != source.FromNoChild {
		// The charted instrument's peak and the save's progress then;
		// nothing for a forkless save (no child: it reads 0 throughout).
		fs = append(fs, fieldOf(PrioMore, "cow peak", val(text.OptBytes(r.PeakCOW))+instrumentTag(st, r.PeakCOW.OK, r.PeakCOWFrom)+st.Label.R(PeakAt(r))))
	}
	fs = append(fs, fieldOf(PrioMore, "footprint", val(text.OptDelta(r.PeakFootprintDelta))+instrumentTag(st, r.PeakFootprintDelta.OK, r.PeakFootprintFrom)),
		fieldOf(PrioMore, "peak used", val(text.OptDelta(r.PeakUsedDelta))),
		fieldOf(PrioMore, "rss", val(text.OptDelta(r.PeakRSSDelta))))
	// What /proc saw, only where it could look (a local server): for a
	// remote one these would be n/a on every report.
	if r.PeakChildPrivateDirty.OK {
		fs = append(fs, fieldOf(PrioMore, "child dirty", val(text.Bytes(r.PeakChildPrivateDirty.V))))
	}
	return fs
}

// instrumentTag names the instrument of a figure that has one: " proc",
// " rdb_last_cow_size", " info rss + rdb_last_cow_size".
func instrumentTag(st *style.Styles, ok bool, from source.Instrument) string {
	if !ok || from == "" {
		return ""
	}
	return st.Dim.R(" " + string(from))
}

// noteTag calls out a fork made under bgsave-default-method forkless.
func noteTag(st *style.Styles, r *source.SaveReport) string {
	if r.MethodNote != "" {
		return st.Warn.R(" ⚠ forked, method forkless")
	}
	return ""
}
