package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The text lines of a pane: its state, the running save, the last save.

// stateLine says how the server is connected, how its PINGs went over the
// last 10 s and how it saves, in width cells: the PING's p50, then how it
// saves, then its max go first where they do not fit.
func stateLine(st *style.Styles, v store.View, width int) string {
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

// saveLine is the running save's facts. In a compact pane the progress
// bar follows on the same line, in the width left.
func saveLine(st *style.Styles, prog progress.Model, s *source.Sample, width int, compact bool) string {
	if s == nil || s.Save == nil {
		return st.Label.R("save ") + st.Dim.R("none running")
	}
	sv := s.Save
	frac, fok := sv.Fraction().Get()
	pct := text.NA
	switch {
	case fok:
		pct = fmt.Sprintf("%.1f%%", frac*100)
	case sv.Kind == source.SaveForklessSync:
		pct = "" // no total: keysText says so
	}
	kind := st.Warn.R("▶ "+string(sv.Kind)) + forcedFork(st, s)
	head := kind + st.Label.R(" by ") + st.Value.R(words.Trigger(sv.Trigger))
	if compact {
		// The bar between the percentage and the ETA, in the room the
		// rest leaves; the key counts last, cut first.
		eta := " " + etaText(st, sv)
		keys := st.Label.R(" keys ") + st.Value.R(keysText(sv))
		// A full sync's output buffer before the keys: the host pays
		// it, the keys only say how far. Room for it comes from the
		// trigger's detail (which replica: the full pane says) and the
		// bar (the percentage stays).
		rb := replBufText(st, s, true)
		if rb != "" {
			eta += st.Label.R(" ") + rb
			head = kind + st.Label.R(" by ") + st.Value.R(string(sv.Trigger.Kind))
		}
		left := head + st.Label.R(" ") + st.Value.R(pct)
		if lipgloss.Width(left+eta) > width {
			// No room for the trigger's detail: the full pane says it.
			left = st.Warn.R("▶ "+string(sv.Kind)) + st.Label.R(" by ") + st.Value.R(string(sv.Trigger.Kind)) +
				st.Label.R(" ") + st.Value.R(pct)
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
	cow := st.Label.R("cow ") + st.Value.R(liveCOW(s))
	if lipgloss.Width(head+st.Value.R(pct)+eta+cow)+6 > width {
		head = kind + st.Label.R(" by ") + st.Value.R(string(sv.Trigger.Kind))
	}
	return text.FitParts(width, "  ", text.Part{Text: head},
		text.Part{Text: st.Label.R("keys ") + st.Value.R(keysText(sv)), Rank: 5},
		text.Part{Text: st.Value.R(pct)}, text.Part{Text: st.Label.R("elapsed ") + st.Value.R(text.Elapsed(sv.Elapsed)), Rank: 4},
		text.Part{Text: eta}, text.Part{Text: cow, Rank: 1}, text.Part{Text: blockedNow(st, s), Rank: 2}, text.Part{Text: aofWaiting(st, s), Rank: 2},
		text.Part{Text: replBufText(st, s, false), Rank: 3})
}

// etaText is a running save's ETA, or the phase it is in where it has
// none (starting, writing its file, stopping after a cancel): never an
// ETA below zero, nor a missing one without saying why.
func etaText(st *style.Styles, sv *source.SaveProgress) string {
	switch {
	case sv.Phase != "":
		return st.Warn.R(sv.Phase)
	case sv.Kind == source.SaveForklessSync:
		return st.Dim.R("no ETA (a sync has no total)")
	}
	return st.Label.R("ETA ") + st.Value.R(text.OptElapsed(sv.ETA))
}

// keysText is a save's keys processed of its total; a sync has no total.
func keysText(sv *source.SaveProgress) string {
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
// save holds up (and any BLPOP); nothing where it was not read.
func blockedNow(st *style.Styles, s *source.Sample) string {
	if v, ok := s.Info.BlockedClients.Get(); ok {
		return st.Label.R("blocked clients ") + st.Value.R(fmt.Sprint(v))
	}
	return ""
}

// aofWaiting says an AOF rewrite waits for the running save
// (aof_rewrite_scheduled): it runs when the save ends.
func aofWaiting(st *style.Styles, s *source.Sample) string {
	if s.Info.AOFRewriteScheduled.V == 1 && s.Save != nil && s.Save.Kind != source.SaveAOF {
		return st.Warn.R("AOF rewrite waiting")
	}
	return ""
}

// saveBar is the running save's progress bar, or, while none runs, how to
// start one.
func saveBar(st *style.Styles, prog progress.Model, s *source.Sample, width int, inFleet bool) string {
	if s == nil || s.Save == nil {
		if inFleet {
			return st.Dim.R("  b saves this server; B in the fleet view (esc) saves the fleet node by node; c shows the saves' cost curves")
		}
		return st.Dim.R("  b saves this server, B every server; c shows the saves' cost curves")
	}
	frac, ok := s.Save.Fraction().Get()
	switch {
	case !ok && s.Save.Kind == source.SaveForklessSync:
		return st.Dim.R("a replica's full sync without a fork: keys sent, no total to measure them against")
	case !ok:
		return st.Dim.R("progress n/a: the server reports no key counts")
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

// reportLines are the three lines of what the last save cost.
func reportLines(st *style.Styles, r *source.SaveReport) []string {
	if r == nil {
		return []string{st.Label.R("last save ") + st.Dim.R("none yet"),
			st.Dim.R("  when a save ends: what it cost (cow, footprint, fork pause), ops/s and PING before → during"), ""}
	}
	sep := st.Dim.R(" · ")
	l1 := st.Label.R("last save ") + st.Value.R(string(r.Kind)) + noteTag(st, r) + st.Label.R(" by ") + st.Value.R(words.Trigger(r.Trigger)) +
		sep + words.Status(st, r) +
		sep + st.Label.R("took ") + st.Value.R(words.ServerSecs(r.ServerSeconds)) + st.Label.R(" server, ") +
		st.Value.R(words.Observed(r)) + st.Label.R(" observed") +
		sep + st.Label.R("fork pause ") + st.Value.R(words.Pause(r))
	l2 := st.Label.R("  cow ") + st.Value.R(words.COW(r)) + peakCOW(st, r) +
		sep + st.Label.R("footprint ") + st.Value.R(text.OptDelta(r.PeakFootprintDelta)) + instrumentTag(st, r.PeakFootprintDelta.OK, r.PeakFootprintFrom) +
		sep + st.Label.R("peak used ") + st.Value.R(text.OptDelta(r.PeakUsedDelta)) +
		sep + st.Label.R("rss ") + st.Value.R(text.OptDelta(r.PeakRSSDelta))
	// What /proc saw, only where it could look (a local server): for a
	// remote one these would be n/a on every report.
	if r.PeakChildPrivateDirty.OK {
		l2 += sep + st.Label.R("child dirty ") + st.Value.R(text.Bytes(r.PeakChildPrivateDirty.V))
	}
	l3 := st.Label.R("  ops/s ") + st.Value.R(text.OptRate(r.OpsBefore)) +
		st.Label.R(" before → ") + st.Value.R(text.OptRate(r.OpsDuring)) + st.Label.R(" during")
	if r.WriterOpsBefore.OK || r.WriterOpsDuring.OK {
		l3 += sep + st.Label.R("writers ") + st.Value.R(text.OptRate(r.WriterOpsBefore)) +
			st.Label.R(" → ") + st.Value.R(text.OptRate(r.WriterOpsDuring))
	}
	l3 += sep + st.Label.R("worst ping ") + st.Value.R(worstDuring(r))
	if r.PingBefore.Count > 0 {
		l3 += st.Label.R(" (before ") + st.Value.R(text.Latency(r.PingBefore.Max)) + st.Label.R(")")
	}
	// What a forkless save costs beside its memory: the writers it held
	// up. A fork save blocks none: its 0 is shown only if not 0.
	if b, ok := r.BlockedWriters().Get(); ok && (b > 0 || r.Kind.Method() == "forkless") {
		l3 += sep + st.Label.R("blocked writers ") + st.Value.R(fmt.Sprint(b))
	}
	l3 += forecastVsActual(st, r, sep)
	return []string{l1, l2, l3}
}

// reportLine is the last save's cost in one line, for a compact pane.
func reportLine(st *style.Styles, r *source.SaveReport) string {
	if r == nil {
		return st.Label.R("last save ") + st.Dim.R("none yet")
	}
	sep := st.Dim.R(" · ")
	return st.Label.R("last ") + st.Value.R(string(r.Kind)) + st.Label.R(" by ") + st.Value.R(words.Trigger(r.Trigger)) +
		" " + words.Status(st, r) +
		sep + st.Label.R("cow ") + st.Value.R(words.COW(r)) + compactPeak(st, r) + compactForecast(st, r) +
		sep + st.Label.R("pause ") + st.Value.R(words.Pause(r)) +
		sep + st.Label.R("ping ") + st.Value.R(worstDuring(r))
}

// worstDuring is the worst PING during a save, n/a without PINGs.
func worstDuring(r *source.SaveReport) string {
	if r.PingDuring.Count > 0 {
		return text.Latency(r.PingDuring.Max)
	}
	return text.NA
}

// compactPeak is peakCOW in a compact pane's last-save line.
func compactPeak(st *style.Styles, r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return ""
	}
	return st.Label.R(" peak ") + st.Value.R(text.OptBytes(r.PeakCOW)) + st.Label.R(fmtPeakAt(r))
}

// peakCOW is the charted instrument's peak copy-on-write during a save
// and its progress then; nothing for a forkless save (no child: the
// instrument reads 0 throughout).
func peakCOW(st *style.Styles, r *source.SaveReport) string {
	if r.COWFrom == source.FromNoChild {
		return ""
	}
	return st.Label.R(" (peak ") + st.Value.R(text.OptBytes(r.PeakCOW)) + instrumentTag(st, r.PeakCOW.OK, r.PeakCOWFrom) + st.Label.R(fmtPeakAt(r)+")")
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

// frame puts lines in a border width x height cells, one space of padding
// on each side, cutting or padding each line to the inner width, then the
// fixed lines, which are the inner width exactly, and blank lines to the
// height. The top border carries title; the
// bottom one carries axis from column axisAt of the inner width on, so
// that it runs under the plots. Done by hand rather than with a lipgloss
// border: this runs on every redraw and knows its lines are single-line.
func frame(st *style.Styles, lines, fixed []string, width, height int, focused bool, title string, axisAt int, axis string) []string {
	edge, paint := st.Edge, st.Border
	if focused {
		edge, paint = st.EdgeFocus, st.BorderFocus
	}
	iw := max(width-paneChrome, 1)
	left, right := paint.R(edge.Left)+" ", " "+paint.R(edge.Right)
	out := make([]string, 0, height)
	title = text.FitLine(title, max(iw-2, 1))
	tw := ansi.StringWidth(title)
	out = append(out, paint.R(edge.TopLeft+edge.Top)+" "+title+" "+
		paint.R(strings.Repeat(edge.Top, max(iw-tw-1, 0))+edge.TopRight))
	for _, l := range lines[:min(len(lines), max(height-2, 0))] {
		out = append(out, left+text.FitCells(l, iw)+right)
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
	b.WriteString(paint.R(edge.BottomLeft + strings.Repeat(edge.Bottom, 1+axisAt)))
	rule := []rune(axis)
	for i := 0; i < len(rule); {
		j := i
		isRule := rule[i] == '─'
		for j < len(rule) && (rule[j] == '─') == isRule {
			j++
		}
		if isRule {
			b.WriteString(paint.R(strings.Repeat(edge.Bottom, j-i)))
		} else {
			b.WriteString(st.Label.R(string(rule[i:j])))
		}
		i = j
	}
	b.WriteString(paint.R(strings.Repeat(edge.Bottom, iw-axisAt-aw+1) + edge.BottomRight))
	return append(out, b.String())
}
