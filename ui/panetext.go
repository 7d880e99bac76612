package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"
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

// saveLine is the running save's facts. In a compact pane the progress
// bar follows on the same line, in the width left.
func saveLine(st *styles, prog progress.Model, s *source.Sample, width int, compact bool) string {
	if s == nil || s.Save == nil {
		return st.label.r("save ") + st.dim.r("none running")
	}
	sv := s.Save
	frac, fok := sv.Fraction().Get()
	pct := na
	switch {
	case fok:
		pct = fmt.Sprintf("%.1f%%", frac*100)
	case sv.Kind == source.SaveForklessSync:
		pct = "" // no total: keysText says so
	}
	kind := st.warn.r("▶ "+string(sv.Kind)) + forcedFork(st, s)
	head := kind + st.label.r(" by ") + st.value.r(fmtTrigger(sv.Trigger))
	if compact {
		// The bar between the percentage and the ETA, in the room the
		// rest leaves; the key counts last, cut first.
		eta := " " + etaText(st, sv)
		keys := st.label.r(" keys ") + st.value.r(keysText(sv))
		// A full sync's output buffer before the keys: the host pays
		// it, the keys only say how far. Room for it comes from the
		// trigger's detail (which replica: the full pane says) and the
		// bar (the percentage stays).
		rb := replBufText(st, s, true)
		if rb != "" {
			eta += st.label.r(" ") + rb
			head = kind + st.label.r(" by ") + st.value.r(string(sv.Trigger.Kind))
		}
		left := head + st.label.r(" ") + st.value.r(pct)
		if lipgloss.Width(left+eta) > width {
			// No room for the trigger's detail: the full pane says it.
			left = st.warn.r("▶ "+string(sv.Kind)) + st.label.r(" by ") + st.value.r(string(sv.Trigger.Kind)) +
				st.label.r(" ") + st.value.r(pct)
		}
		if room := width - lipgloss.Width(left+eta) - 1; fok && room >= 6 && rb == "" {
			prog.Width = min(room, 30)
			left += " " + prog.ViewAs(frac)
		}
		if lipgloss.Width(left+eta+keys) <= width {
			return left + eta + keys
		}
		return left + eta
	}
	// What does not fit goes: the keys, then the elapsed time, the full
	// sync's buffer, the blocked clients, the waiting AOF rewrite, the
	// trigger's detail; the percentage, the ETA (or the phase) and the
	// copy-on-write stay.
	eta := etaText(st, sv)
	cow := st.label.r("cow ") + st.value.r(liveCOW(s))
	if lipgloss.Width(head+st.value.r(pct)+eta+cow)+6 > width {
		head = kind + st.label.r(" by ") + st.value.r(string(sv.Trigger.Kind))
	}
	return fitParts(width, "  ", part{head, 0},
		part{st.label.r("keys ") + st.value.r(keysText(sv)), 5},
		part{st.value.r(pct), 0}, part{st.label.r("elapsed ") + st.value.r(fmtElapsed(sv.Elapsed)), 4},
		part{eta, 0}, part{cow, 1}, part{blockedNow(st, s), 2}, part{aofWaiting(st, s), 2},
		part{replBufText(st, s, false), 3})
}

// etaText is a running save's ETA, or the phase it is in where it has
// none (starting, writing its file, stopping after a cancel): never an
// ETA below zero, nor a missing one without saying why.
func etaText(st *styles, sv *source.SaveProgress) string {
	switch {
	case sv.Phase != "":
		return st.warn.r(sv.Phase)
	case sv.Kind == source.SaveForklessSync:
		return st.dim.r("no ETA (a sync has no total)")
	}
	return st.label.r("ETA ") + st.value.r(fmtOptElapsed(sv.ETA))
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
// save holds up (and any BLPOP); nothing where it was not read.
func blockedNow(st *styles, s *source.Sample) string {
	if v, ok := s.Info.BlockedClients.Get(); ok {
		return st.label.r("blocked clients ") + st.value.r(fmt.Sprint(v))
	}
	return ""
}

// aofWaiting says an AOF rewrite waits for the running save
// (aof_rewrite_scheduled): it runs when the save ends.
func aofWaiting(st *styles, s *source.Sample) string {
	if s.Info.AOFRewriteScheduled.V == 1 && s.Save != nil && s.Save.Kind != source.SaveAOF {
		return st.warn.r("AOF rewrite waiting")
	}
	return ""
}

// saveBar is the running save's progress bar, or, while none runs, how to
// start one.
func saveBar(st *styles, prog progress.Model, s *source.Sample, width int, inFleet bool) string {
	if s == nil || s.Save == nil {
		if inFleet {
			return st.dim.r("  b saves this server; B in the fleet view (esc) saves the fleet node by node; c shows the saves' cost curves")
		}
		return st.dim.r("  b saves this server, B every server; c shows the saves' cost curves")
	}
	frac, ok := s.Save.Fraction().Get()
	switch {
	case !ok && s.Save.Kind == source.SaveForklessSync:
		return st.dim.r("a replica's full sync without a fork: keys sent, no total to measure them against")
	case !ok:
		return st.dim.r("progress n/a: the server reports no key counts")
	}
	prog.Width = width
	return prog.ViewAs(frac)
}

// fmtPeakAt renders "at 62% progress", or nothing when unknown.
func fmtPeakAt(r *source.SaveReport) string {
	if f, ok := r.PeakAtProgress.Get(); ok {
		return fmt.Sprintf(" at %.0f%% progress", f*100)
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

// reportLines are the three lines of what the last save cost.
func reportLines(st *styles, r *source.SaveReport) []string {
	if r == nil {
		return []string{st.label.r("last save ") + st.dim.r("none yet"),
			st.dim.r("  when a save ends: what it cost (cow, footprint, fork pause), ops/s and PING before → during"), ""}
	}
	sep := st.dim.r(" · ")
	l1 := st.label.r("last save ") + st.value.r(string(r.Kind)) + noteTag(st, r) + st.label.r(" by ") + st.value.r(fmtTrigger(r.Trigger)) +
		sep + reportStatus(st, r) +
		sep + st.label.r("took ") + st.value.r(fmtServerSecs(r.ServerSeconds)) + st.label.r(" server, ") +
		st.value.r(fmtObserved(r)) + st.label.r(" observed") +
		sep + st.label.r("fork pause ") + st.value.r(reportPause(r))
	l2 := st.label.r("  cow ") + st.value.r(reportCOW(r)) + peakCOW(st, r) +
		sep + st.label.r("footprint ") + st.value.r(fmtOptDelta(r.PeakFootprintDelta)) + instrumentTag(st, r.PeakFootprintDelta.OK, r.PeakFootprintFrom) +
		sep + st.label.r("peak used ") + st.value.r(fmtOptDelta(r.PeakUsedDelta)) +
		sep + st.label.r("rss ") + st.value.r(fmtOptDelta(r.PeakRSSDelta))
	// What /proc saw, only where it could look (a local server): for a
	// remote one these would be n/a on every report.
	if r.PeakChildPrivateDirty.OK {
		l2 += sep + st.label.r("child dirty ") + st.value.r(fmtBytes(r.PeakChildPrivateDirty.V))
	}
	l3 := st.label.r("  ops/s ") + st.value.r(fmtOptRate(r.OpsBefore)) +
		st.label.r(" before → ") + st.value.r(fmtOptRate(r.OpsDuring)) + st.label.r(" during")
	if r.WriterOpsBefore.OK || r.WriterOpsDuring.OK {
		l3 += sep + st.label.r("writers ") + st.value.r(fmtOptRate(r.WriterOpsBefore)) +
			st.label.r(" → ") + st.value.r(fmtOptRate(r.WriterOpsDuring))
	}
	l3 += sep + st.label.r("worst ping ") + st.value.r(worstDuring(r))
	if r.PingBefore.Count > 0 {
		l3 += st.label.r(" (before ") + st.value.r(fmtLatency(r.PingBefore.Max)) + st.label.r(")")
	}
	// What a forkless save costs beside its memory: the writers it held
	// up. A fork save blocks none: its 0 is shown only if not 0.
	if b, ok := r.BlockedWriters().Get(); ok && (b > 0 || r.Kind.Method() == "forkless") {
		l3 += sep + st.label.r("blocked writers ") + st.value.r(fmt.Sprint(b))
	}
	l3 += forecastVsActual(st, r, sep)
	return []string{l1, l2, l3}
}

// reportLine is the last save's cost in one line, for a compact pane.
func reportLine(st *styles, r *source.SaveReport) string {
	if r == nil {
		return st.label.r("last save ") + st.dim.r("none yet")
	}
	sep := st.dim.r(" · ")
	return st.label.r("last ") + st.value.r(string(r.Kind)) + st.label.r(" by ") + st.value.r(fmtTrigger(r.Trigger)) +
		" " + reportStatus(st, r) +
		sep + st.label.r("cow ") + st.value.r(reportCOW(r)) + compactPeak(st, r) + compactForecast(st, r) +
		sep + st.label.r("pause ") + st.value.r(reportPause(r)) +
		sep + st.label.r("ping ") + st.value.r(worstDuring(r))
}

// worstDuring is the worst PING during a save, n/a without PINGs.
func worstDuring(r *source.SaveReport) string {
	if r.PingDuring.Count > 0 {
		return fmtLatency(r.PingDuring.Max)
	}
	return na
}

// compactPeak is peakCOW in a compact pane's last-save line.
func compactPeak(st *styles, r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return ""
	}
	return st.label.r(" peak ") + st.value.r(fmtOptBytes(r.PeakCOW)) + st.label.r(fmtPeakAt(r))
}

// peakCOW is the charted instrument's peak copy-on-write during a save
// and its progress then; nothing for a forkless save (no child: the
// instrument reads 0 throughout).
func peakCOW(st *styles, r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return ""
	}
	return st.label.r(" (peak ") + st.value.r(fmtOptBytes(r.PeakCOW)) + instrumentTag(st, r.PeakCOW.OK, r.PeakCOWFrom) + st.label.r(fmtPeakAt(r)+")")
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
