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
// last 10 s and how it saves.
func stateLine(st *styles, v store.View) string {
	var conn string
	switch v.State {
	case store.Connecting:
		conn = st.warn.r("connecting…")
	case store.Connected:
		conn = st.ok.r("connected")
	case store.Disconnected:
		conn = st.err.r("✗ disconnected: " + fmtOrNA(v.Reason) + ", retrying")
	}
	sep := st.dim.r(" · ")
	return conn + sep + pingStats(st, v.Latest) + sep + saveMethod(st, v.Latest)
}

// saveMethod renders the save method in force and the forkless switch.
func saveMethod(st *styles, s *source.Sample) string {
	method, infra := na, na
	if s != nil {
		method = fmtOrNA(s.Config.Method)
		if v, ok := s.Config.ForklessInfra.Get(); ok {
			infra = map[bool]string{true: "on", false: "off"}[v]
		}
	}
	out := st.label.r("save method ") + st.value.r(method) +
		st.label.r(" · forkless infra ") + st.value.r(infra)
	if s != nil && s.Config.Err != "" {
		out += st.warn.r(" (config: " + s.Config.Err + ")")
	}
	return out
}

// pingStats summarises the last 10 s of PINGs.
func pingStats(st *styles, s *source.Sample) string {
	head := st.series[pingMetric].r("ping 10s ")
	if s == nil || s.Ping10s.Count == 0 {
		out := head + st.value.r(na)
		if s != nil && s.Ping.InFlight > 0 {
			out += st.warn.r(" in flight " + fmtLatency(s.Ping.InFlight))
		}
		return out
	}
	l := s.Ping10s
	out := head + st.label.r("p50 ") + st.value.r(fmtLatency(l.P50)) +
		st.label.r("  p99 ") + st.value.r(fmtLatency(l.P99)) +
		st.label.r("  max ") + st.value.r(fmtLatency(l.Max))
	// The PING in flight now (the sample's, in Ping).
	if s.Ping.InFlight > l.Max {
		out += st.warn.r("  in flight " + fmtLatency(s.Ping.InFlight))
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
	if fok {
		pct = fmt.Sprintf("%.1f%%", frac*100)
	}
	head := st.warn.r("▶ "+string(sv.Kind)) + st.label.r(" by ") + st.value.r(fmtTrigger(sv.Trigger))
	if compact {
		// The bar between the percentage and the ETA, in the room the
		// rest leaves; the key counts last, cut first.
		eta := st.label.r(" ETA ") + st.value.r(fmtOptElapsed(sv.ETA))
		keys := st.label.r(" keys ") + st.value.r(fmtOptCount(sv.Processed)+"/"+fmtOptCount(sv.Total))
		// A full sync's output buffer before the keys: the host pays
		// it, the keys only say how far. Room for it comes from the
		// trigger's detail (which replica: the full pane says) and the
		// bar (the percentage stays).
		rb := replBufText(st, s, true)
		if rb != "" {
			eta += st.label.r(" ") + rb
			head = st.warn.r("▶ "+string(sv.Kind)) + st.label.r(" by ") + st.value.r(string(sv.Trigger.Kind))
		}
		left := head + st.label.r(" ") + st.value.r(pct)
		if room := width - lipgloss.Width(left+eta) - 1; fok && room >= 6 && rb == "" {
			prog.Width = min(room, 30)
			left += " " + prog.ViewAs(frac)
		}
		return left + eta + keys
	}
	return head + st.label.r("  keys ") + st.value.r(fmtOptCount(sv.Processed)+"/"+fmtOptCount(sv.Total)) +
		st.label.r("  ") + st.value.r(pct) +
		st.label.r("  elapsed ") + st.value.r(fmtElapsed(sv.Elapsed)) +
		st.label.r("  ETA ") + st.value.r(fmtOptElapsed(sv.ETA)) +
		st.label.r("  cow ") + st.value.r(fmtOptBytes(s.COW)) + replBufFull(st, s)
}

// replBufFull is replBufText after two spaces, or nothing.
func replBufFull(st *styles, s *source.Sample) string {
	if rb := replBufText(st, s, false); rb != "" {
		return st.label.r("  ") + rb
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
	if !ok {
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
	server := na
	if v, ok := r.ServerSeconds.Get(); ok {
		server = fmt.Sprintf("%ds", v)
	}
	sep := st.dim.r(" · ")
	l1 := st.label.r("last save ") + st.value.r(string(r.Kind)) + st.label.r(" by ") + st.value.r(fmtTrigger(r.Trigger)) +
		sep + reportStatus(st, r) +
		sep + st.label.r("took ") + st.value.r(server) + st.label.r(" server, ") +
		st.value.r(fmtElapsed(r.Observed)) + st.label.r(" observed") +
		sep + st.label.r("fork pause ") + st.value.r(fmtOptPause(r.ForkPause))
	l2 := st.label.r("  cow ") + st.value.r(fmtOptBytes(r.COW)) +
		st.label.r(" (peak ") + st.value.r(fmtOptBytes(r.PeakCOW)) + st.label.r(fmtPeakAt(r)+")") +
		sep + st.label.r("footprint ") + st.value.r(fmtOptDelta(r.PeakFootprintDelta)) +
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
		sep + st.label.r("cow ") + st.value.r(fmtOptBytes(r.COW)) +
		st.label.r(" peak ") + st.value.r(fmtOptBytes(r.PeakCOW)) + st.label.r(fmtPeakAt(r)) + compactForecast(st, r) +
		sep + st.label.r("pause ") + st.value.r(fmtOptPause(r.ForkPause)) +
		sep + st.label.r("ping ") + st.value.r(worstDuring(r))
}

// worstDuring is the worst PING during a save, n/a without PINGs.
func worstDuring(r *source.SaveReport) string {
	if r.PingDuring.Count > 0 {
		return fmtLatency(r.PingDuring.Max)
	}
	return na
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
	title = ansi.Truncate(title, max(iw-2, 1), "…")
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

// padRight pads s (which may hold escapes) with spaces to width cells.
func padRight(s string, width int) string {
	if n := lipgloss.Width(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// fitRight right-aligns s in width cells, cutting it when longer.
func fitRight(s string, width int) string {
	s, n := cut(s, lipgloss.Width(s), width)
	return strings.Repeat(" ", max(width-n, 0)) + s
}

// fitCells cuts s to w cells, ending in "…", or pads it with spaces to
// exactly w; a line of one row. It measures s once, and again only after
// a cut.
func fitCells(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s, n := cut(s, ansi.StringWidth(s), w)
	return s + strings.Repeat(" ", w-n)
}

// cut cuts s, n cells wide, to at most w cells, ending in "…", and says
// how wide it is then: a wide character at the cut leaves it a cell short
// of w, which a caller padding to w must count.
func cut(s string, n, w int) (string, int) {
	if n <= w {
		return s, n
	}
	s = ansi.Truncate(s, max(w, 0), "…")
	return s, ansi.StringWidth(s)
}
