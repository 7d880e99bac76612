package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
)

// The text lines of a pane: its state, the running save, the last save.

// stateLine says how the server is connected, how its PINGs went over the
// last 10 s and how it saves, in width cells: the PING's p50, then how it
// saves, then its max go first where they do not fit.
func stateLine(st *styles, v store.View, width int) string {
	var conn string
	switch v.State {
	case store.Connecting:
		conn = st.warn.r("connecting…")
	case store.Connected:
		conn = st.ok.r("connected")
	case store.Disconnected:
		conn = st.err.r("✗ disconnected: " + fmtOrNA(v.Reason) + ", retrying")
	}
	s := v.Latest
	parts := []part{{conn + st.dim.r(" · ") + st.series[pingMetric].r("ping 10s"), 0}}
	if s == nil || s.Ping10s.Count == 0 {
		parts = append(parts, part{st.value.r(na), 0})
		if s != nil && s.Ping.InFlight > 0 {
			parts = append(parts, part{st.warn.r("in flight " + fmtLatency(s.Ping.InFlight)), 0})
		}
	} else {
		l := s.Ping10s
		parts = append(parts, part{st.label.r("p50 ") + st.value.r(fmtLatency(l.P50)), 3},
			part{st.label.r("p99 ") + st.value.r(fmtLatency(l.P99)), 0},
			part{st.label.r("max ") + st.value.r(fmtLatency(l.Max)), 1})
		// The PING in flight now (the sample's, in Ping).
		if s.Ping.InFlight > l.Max {
			parts = append(parts, part{st.warn.r("in flight " + fmtLatency(s.Ping.InFlight)), 0})
		}
	}
	parts = append(parts, part{st.dim.r("·") + " " + saveMethod(st, s), 2})
	return fitParts(width, " ", parts...)
}

// saveMethod says how the server saves: bgsave-default-method and
// whether it could save forkless (forkless-infrastructure-enabled), or,
// on a server without them (Redis, Valkey before 9.2), that it saves by
// fork only.
func saveMethod(st *styles, s *source.Sample) string {
	switch {
	case s == nil:
		return st.label.r("save method ") + st.value.r(na)
	case s.Config.Err != "":
		return st.label.r("save method ") + st.value.r(na) + st.warn.r(" (CONFIG GET: "+s.Config.Err+")")
	case s.Config.Method == "" && !s.Config.ForklessInfra.OK:
		return st.label.r("saves by ") + st.value.r("fork") + st.label.r(" only")
	case s.Config.Method == "forkless":
		return st.label.r("saves ") + st.value.r("forkless")
	}
	out := st.label.r("saves by ") + st.value.r(fmtOrNA(s.Config.Method))
	if on, ok := s.Config.ForklessInfra.Get(); ok && on {
		out += st.label.r(" (forkless ready)")
	}
	return out
}

// fmtTrigger says who started a save: "vkwatch", "replica 10.0.0.7:6380,
// diskless", "schedule (save 60 10000)"; n/a when vkwatch cannot tell.
func fmtTrigger(t source.Trigger) string {
	switch {
	case t.Kind == "":
		return na
	case t.Detail == "" || t.Kind == source.TriggerUser:
		// vkwatch's own command is the save's kind already.
		return string(t.Kind)
	case strings.HasPrefix(t.Detail, string(t.Kind)):
		return t.Detail
	}
	return string(t.Kind) + " (" + t.Detail + ")"
}

// saveBlock is the running save: what runs and who started it, its
// progress bar after the title, and its fields. The keys processed /
// total come right after the progress: they are what the bar measures.
func saveBlock(st *styles, prog progress.Model, v store.View) block {
	s := v.Latest
	sv := s.Save
	kind := st.warn.r("▶ "+string(sv.Kind)) + forcedFork(st, s)
	b := block{
		title: kind + st.label.r(" by ") + st.value.r(fmtTrigger(sv.Trigger)),
		short: kind,
	}
	frac, fok := sv.Fraction().Get()
	switch {
	case fok:
		b.fields = append(b.fields, fieldOf(prioProgress, "progress", st.value.r(fmt.Sprintf("%.1f%%", frac*100))))
	case sv.Kind != source.SaveForklessSync: // a sync has no total: its keys say so
		b.fields = append(b.fields, fieldOf(prioProgress, "progress", st.value.r(na)))
	}
	b.fields = append(b.fields, fieldOf(prioKeys, "keys", st.value.r(keysText(sv))), etaField(st, sv))
	// A forkless save's cost is the writers it holds up, not its
	// copy-on-write (none): they come first.
	blocked, bok := blockedNow(st, s)
	if bok && blocked.prio == prioCOW {
		b.fields = append(b.fields, blocked)
	}
	b.fields = append(b.fields, cowNowField(st, s))
	b.fields = append(b.fields, replBufFields(st, s)...)
	b.fields = append(b.fields, fieldOf(prioMore, "elapsed", st.value.r(fmtElapsed(sv.Elapsed))))
	if bok && blocked.prio != prioCOW {
		b.fields = append(b.fields, blocked)
	}
	if s.Info.AOFRewriteScheduled.V == 1 && sv.Kind != source.SaveAOF {
		// aof_rewrite_scheduled: the rewrite runs when the save ends.
		b.fields = append(b.fields, fieldOf(prioMore, "AOF rewrite", st.warn.r("waiting")))
	}
	if v.Stuck != "" {
		b.short = st.err.r("⚠ stuck? ") + kind
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
			return st.dim.r("a replica's full sync without a fork: keys sent, no total")
		}
		return st.dim.r("progress n/a: the server reports no key counts")
	}
	return b
}

// etaField is a running save's ETA, or the phase it is in where it has
// none (starting, writing its file, stopping after a cancel): never an
// ETA below zero, nor a missing one without saying why.
func etaField(st *styles, sv *source.SaveProgress) field {
	switch {
	case sv.Phase != "":
		return fieldOf(prioETA, "phase", st.warn.r(sv.Phase))
	case sv.Kind == source.SaveForklessSync:
		return fieldOf(prioETA, "ETA", st.dim.r("none (a sync has no total)"))
	}
	return fieldOf(prioETA, "ETA", st.value.r(fmtOptElapsed(sv.ETA)))
}

// cowNowField is the running save's copy-on-write now and its
// instrument.
func cowNowField(st *styles, s *source.Sample) field {
	v := st.value.r(liveCOW(s))
	if s.Save.Kind.Method() != "forkless" && s.COW.OK {
		tag, _ := metrics[cowMetric].from(s)
		v += instrumentTag(st, tag != "", source.Instrument(tag))
	}
	return fieldOf(prioCOW, "cow", v).or(st.value.r(noneShort(liveCOW(s))))
}

// keysText is a save's keys processed of its total; a sync has no total.
func keysText(sv *source.SaveProgress) string {
	if sv.Kind == source.SaveForklessSync {
		return fmtOptCount(sv.Processed) + " (a sync: no total)"
	}
	return fmtOptCount(sv.Processed) + "/" + fmtOptCount(sv.Total)
}

// liveCOW is the running save's copy-on-write: none for a forkless save
// (no child), else the instrument's figure.
func liveCOW(s *source.Sample) string {
	if s.Save != nil && s.Save.Kind.Method() == "forkless" {
		return "none (no child)"
	}
	return fmtOptBytes(s.COW)
}

// forcedFork calls out a fork while bgsave-default-method is forkless.
func forcedFork(st *styles, s *source.Sample) string {
	if s != nil && source.ForcedFork(s) {
		return st.warn.r(" ⚠ forked, method forkless")
	}
	return ""
}

// blockedNow is blocked_clients during a save: the writers a forkless
// save holds up (and any BLPOP), ranked with the copy-on-write a fork
// save costs instead. A fork save blocks no writer: its field shows only
// where some client is blocked, never "0".
func blockedNow(st *styles, s *source.Sample) (field, bool) {
	v, ok := s.Info.BlockedClients.Get()
	forkless := s.Save.Kind.Method() == "forkless"
	if !ok || v == 0 && !forkless {
		return field{}, false
	}
	return fieldOf(blockedPrio(forkless), "blocked clients", st.value.r(fmt.Sprint(v))), true
}

// blockedPrio is where writers held up rank: with the copy-on-write for
// a forkless save (its cost), with the fork pause otherwise.
func blockedPrio(forkless bool) prio {
	if forkless {
		return prioCOW
	}
	return prioPause
}

// fmtPeakAt renders " at 62%", or nothing where the peak's progress is
// not known (source.SaveReport.PeakProgress).
func fmtPeakAt(r *source.SaveReport) string {
	if f, ok := r.PeakProgress().Get(); ok {
		return fmt.Sprintf(" at %.0f%%", f*100)
	}
	return ""
}

// reportStatus renders a report's status, readable without colour.
func reportStatus(st *styles, r *source.SaveReport) string {
	switch r.Status {
	case "":
		if r.Kind == source.SaveForklessSync {
			return st.dim.r("a sync: no status")
		}
		return st.value.r(na)
	case "ok":
		return st.ok.r("ok")
	case source.StatusCancelled:
		// The user's own doing, not a failure of the server's.
		return st.warn.r(source.StatusCancelled)
	}
	return st.err.r("✗ " + r.Status)
}

// beforeDuring is the legend of the fields that read "a → b".
const beforeDuring = "a → b: before → during"

// reportBlock is what the last save cost: its kind, trigger and how it
// ended in the title, its figures as fields.
func reportBlock(st *styles, r *source.SaveReport) block {
	if r == nil {
		return block{title: st.label.r("last save ") + st.dim.r("none yet"), short: st.label.r("last save ") + st.dim.r("none yet"),
			note: st.dim.r("when a save ends: its cost, ops/s and PING before → during")}
	}
	kind := st.value.r(string(r.Kind)) + noteTag(st, r)
	b := block{
		title: st.label.r("last save ") + kind + st.label.r(" by ") + st.value.r(fmtTrigger(r.Trigger)) +
			st.dim.r(" · ") + reportStatus(st, r),
		short: st.label.r("last ") + kind + " " + reportStatus(st, r),
		extra: func(room int) string {
			if room >= len(beforeDuring) {
				return st.dim.r(beforeDuring)
			}
			return ""
		},
	}
	b.fields = reportFields(st, r)
	return b
}

// reportFields are a save report's figures, in reading order.
func reportFields(st *styles, r *source.SaveReport) []field {
	val := st.value.r
	var fs []field
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
		fieldOf(prioCOW, "cow", val(reportCOW(r))).or(val(noneShort(reportCOW(r)))),
		fieldOf(prioDuration, "took", val(fmtServerSecs(r.ServerSeconds))+st.dim.r(" server")).or(val(fmtServerSecs(r.ServerSeconds))),
		fieldOf(prioDuration, "observed", val(fmtObserved(r))),
		fieldOf(prioPause, "fork pause", val(reportPause(r))).or(val(noneShort(reportPause(r)))))
	if bok && !forkless {
		fs = append(fs, blocked)
	}
	worst := func(l source.Latency) string {
		if l.Count > 0 {
			return fmtLatency(l.Max)
		}
		return na
	}
	fs = append(fs, fieldOf(prioPing, "ping max", val(worst(r.PingBefore))+st.label.r(" → ")+val(worst(r.PingDuring))),
		fieldOf(prioOps, "ops/s", val(fmtOptRate(r.OpsBefore))+st.label.r(" → ")+val(fmtOptRate(r.OpsDuring))))
	if r.WriterOpsBefore.OK || r.WriterOpsDuring.OK {
		fs = append(fs, fieldOf(prioOps, "writers/s", val(fmtOptRate(r.WriterOpsBefore))+st.label.r(" → ")+val(fmtOptRate(r.WriterOpsDuring))))
	}
	fs = append(fs, forecastFields(st, r)...)
	if r.COWFrom != source.FromNoChild {
		// The charted instrument's peak and the save's progress then;
		// nothing for a forkless save (no child: it reads 0 throughout).
		fs = append(fs, fieldOf(prioMore, "cow peak", val(fmtOptBytes(r.PeakCOW))+instrumentTag(st, r.PeakCOW.OK, r.PeakCOWFrom)+st.label.r(fmtPeakAt(r))))
	}
	fs = append(fs, fieldOf(prioMore, "footprint", val(fmtOptDelta(r.PeakFootprintDelta))+instrumentTag(st, r.PeakFootprintDelta.OK, r.PeakFootprintFrom)),
		fieldOf(prioMore, "peak used", val(fmtOptDelta(r.PeakUsedDelta))),
		fieldOf(prioMore, "rss", val(fmtOptDelta(r.PeakRSSDelta))))
	// What /proc saw, only where it could look (a local server): for a
	// remote one these would be n/a on every report.
	if r.PeakChildPrivateDirty.OK {
		fs = append(fs, fieldOf(prioMore, "child dirty", val(fmtBytes(r.PeakChildPrivateDirty.V))))
	}
	return fs
}

// instrumentTag names the instrument of a figure that has one: " proc",
// " rdb_last_cow_size", " info rss + rdb_last_cow_size".
func instrumentTag(st *styles, ok bool, from source.Instrument) string {
	if !ok || from == "" {
		return ""
	}
	return st.dim.r(" " + string(from))
}

// fmtServerSecs is rdb_last_bgsave_time_sec / aof_last_rewrite_time_sec:
// whole seconds of the server's clock, so 0 is under a second.
func fmtServerSecs(o source.Opt[int64]) string {
	v, ok := o.Get()
	switch {
	case !ok:
		return na
	case v == 0:
		return "<1s"
	}
	return fmt.Sprintf("%ds", v)
}

// fmtObserved is how long the samples saw a save run: "≤0.2s" for one
// no sample saw running (it ran between two of them).
func fmtObserved(r *source.SaveReport) string {
	if r.ObservedUpTo {
		return "≤" + fmtElapsed(r.Observed)
	}
	return fmtElapsed(r.Observed)
}

// reportCOW is a save's copy-on-write by the server's account: none for a
// forkless save or sync (no child: never rdb_last_cow_size, which is the
// last fork save's), n/a where no figure is this save's (a fork save
// that failed, was cancelled or aborted).
func reportCOW(r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return "none (no child)"
	}
	return fmtOptBytes(r.COW)
}

// reportPause is a save's fork pause: none for a forkless one.
func reportPause(r *source.SaveReport) string {
	if r.Kind.Method() == "forkless" {
		return "none (no fork)"
	}
	return fmtOptPause(r.ForkPause)
}

// noteTag calls out a fork made under bgsave-default-method forkless.
func noteTag(st *styles, r *source.SaveReport) string {
	if r.MethodNote != "" {
		return st.warn.r(" ⚠ forked, method forkless")
	}
	return ""
}

// fmtOptPause renders the fork pause; absent forkless (there is no fork).
func fmtOptPause(o source.Opt[time.Duration]) string {
	if !o.OK {
		return na
	}
	return fmtLatency(o.V)
}

// frame puts lines in a border width x height cells, one space of padding
// on each side, cutting or padding each line to the inner width, then the
// fixed lines, which are the inner width exactly, and blank lines to the
// height. The top border carries title; the
// bottom one carries axis from column axisAt of the inner width on, so
// that it runs under the plots. Done by hand rather than with a lipgloss
// border: this runs on every redraw and knows its lines are single-line.
func frame(st *styles, lines, fixed []string, width, height int, focused bool, title string, axisAt int, axis string) []string {
	edge, paint := st.edge, st.border
	if focused {
		edge, paint = st.edgeFocus, st.borderFocus
	}
	iw := max(width-paneChrome, 1)
	left, right := paint.r(edge.Left)+" ", " "+paint.r(edge.Right)
	out := make([]string, 0, height)
	title = fitLine(title, max(iw-2, 1))
	tw := ansi.StringWidth(title)
	out = append(out, paint.r(edge.TopLeft+edge.Top)+" "+title+" "+
		paint.r(strings.Repeat(edge.Top, max(iw-tw-1, 0))+edge.TopRight))
	for _, l := range lines[:min(len(lines), max(height-2, 0))] {
		out = append(out, left+fitCells(l, iw)+right)
	}
	// The chart lines are iw cells wide by construction: measuring each
	// (braille runes, through a grapheme iterator) would cost more than
	// drawing it.
	for _, l := range fixed[:min(len(fixed), max(height-1-len(out), 0))] {
		out = append(out, left+l+right)
	}
	for len(out) < height-1 {
		out = append(out, left+strings.Repeat(" ", iw)+right)
	}
	aw := ansi.StringWidth(axis)
	if axisAt+aw > iw {
		axis, aw = "", 0
	}
	// The axis's labels in the label colour, its rule as the border.
	var b strings.Builder
	b.WriteString(paint.r(edge.BottomLeft + strings.Repeat(edge.Bottom, 1+axisAt)))
	rule := []rune(axis)
	for i := 0; i < len(rule); {
		j := i
		isRule := rule[i] == '─'
		for j < len(rule) && (rule[j] == '─') == isRule {
			j++
		}
		if isRule {
			b.WriteString(paint.r(strings.Repeat(edge.Bottom, j-i)))
		} else {
			b.WriteString(st.label.r(string(rule[i:j])))
		}
		i = j
	}
	b.WriteString(paint.r(strings.Repeat(edge.Bottom, iw-axisAt-aw+1) + edge.BottomRight))
	return append(out, b.String())
}
