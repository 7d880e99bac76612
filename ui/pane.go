package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
)

// Pane geometry. A pane is a bordered box; inside it every line is cut to
// the inner width so lipgloss never wraps one into two.
const (
	labelWidth    = 34 // "ops/s 12.3k w 4.54k max 15.0k", see chartLabel
	minChartWidth = 20
	paneChrome    = 4 // border and padding, left and right
	minPaneWidth  = labelWidth + minChartWidth + paneChrome
	// Lines besides the charts: 2 header, marker row, ping stats, /proc,
	// 2 save progress, 3 last save; plus the top and bottom border.
	paneFixedLines = 2 + 1 + 1 + 1 + 2 + 3 + 2
)

// paneHeight is the height of a pane whose sparklines have rows rows each.
func paneHeight(rows int) int { return paneFixedLines + int(numMetrics)*rows }

// connState is what the pane knows about its connection.
type connState int

const (
	stConnecting connState = iota // nothing heard yet
	stConnected
	stDisconnected
)

// paneInfo is everything a pane's text shows. The pane keeps two: live, into
// which every event is folded, and shown, which is drawn. They are the same
// except while paused, when shown stays frozen.
type paneInfo struct {
	ident  *source.Identity
	sample *source.Sample // latest
	state  connState
	reason string // why the connection dropped
	report *source.SaveReport
	spans  []span
	gaps   []gap
	now    time.Duration // the charts' right edge
}

// clone copies the slices, which live goes on appending to and editing.
func (i paneInfo) clone() paneInfo {
	i.spans = slices.Clone(i.spans)
	i.gaps = slices.Clone(i.gaps)
	return i
}

// pane is one server's state and its cached drawing.
type pane struct {
	index int // position on screen
	id    source.NodeID
	addr  string

	live, shown paneInfo
	changed     bool // live changed since shown was synced
	series      series
	lastSeq     uint64 // Seq of the last point pushed, to skip a sample seen twice
	pushed      bool

	charts chartSet

	// The drawn box, and what it was drawn for. boxStale is set whenever
	// shown or the charts change.
	boxLines []string
	boxFor   boxKey
	boxOK    bool
	boxStale bool
	// dirty says shown changed since charts were drawn; drawnRight is the
	// bucket of the right edge they were drawn for, so a pane with no new
	// samples (a disconnected one) still scrolls when time moves a column.
	dirty      bool
	drawnRight int64
}

func newPane(index int, id source.NodeID, addr string, window, interval time.Duration) *pane {
	return &pane{index: index, id: id, addr: addr, charts: newChartSet(window, interval), dirty: true}
}

// fold applies one event to the live state.
func (p *pane) fold(ev source.Event) {
	l := &p.live
	switch ev.Kind {
	case source.EventConnected:
		l.ident = ev.Identity
		l.state = stConnected
		l.reason = ""
		if n := len(l.gaps); n > 0 && l.gaps[n-1].open {
			l.gaps[n-1].to, l.gaps[n-1].open = ev.Offset, false
		}
	case source.EventDisconnected:
		l.state = stDisconnected
		l.reason = ev.Err
		if n := len(l.gaps); n == 0 || !l.gaps[n-1].open {
			l.gaps = append(l.gaps, gap{from: ev.Offset, open: true})
		}
	case source.EventSample, source.EventSaveStarted:
		if ev.Sample != nil {
			p.addSample(ev.Sample, ev.Kind == source.EventSaveStarted)
		}
	case source.EventSaveEnded:
		if r := ev.Report; r != nil {
			l.report = r
			p.endSpan(r)
		}
	}
}

// addSample records a sample once (the watcher may send the sample that saw
// a save start both as a sample and as the save's start) and keeps the save
// span up to date.
func (p *pane) addSample(s *source.Sample, started bool) {
	l := &p.live
	if !p.pushed || s.Seq != p.lastSeq {
		p.series.push(pointOf(s))
		p.lastSeq, p.pushed = s.Seq, true
	}
	if l.sample == nil || s.Offset >= l.sample.Offset {
		l.sample = s
	}
	if s.Save == nil {
		return
	}
	n := len(l.spans)
	open := n > 0 && !l.spans[n-1].ended
	if open && l.spans[n-1].kind != s.Save.Kind {
		// A different job is running now (an AOF rewrite that waited for a
		// BGSAVE): the previous one is over even if its end was missed.
		l.spans[n-1].ended = true
		open = false
	}
	if !open {
		start := s.Save.Started
		if started && start == 0 {
			start = s.Offset
		}
		l.spans = append(l.spans, span{kind: s.Save.Kind, start: start, end: s.Offset})
		return
	}
	if s.Offset > l.spans[n-1].end {
		l.spans[n-1].end = s.Offset
	}
}

// endSpan closes the span of the save a report describes, or adds it whole
// when its start was never seen (a save shorter than one sample).
func (p *pane) endSpan(r *source.SaveReport) {
	l := &p.live
	for i := len(l.spans) - 1; i >= 0; i-- {
		if !l.spans[i].ended && l.spans[i].kind == r.Kind {
			l.spans[i].end, l.spans[i].ended = r.Ended, true
			return
		}
	}
	l.spans = append(l.spans, span{kind: r.Kind, start: r.Started, end: r.Ended, ended: true})
}

// prune forgets what has scrolled out of every window the pane may draw.
func (p *pane) prune(now, keep time.Duration) {
	cut := now - keep
	if cut <= 0 {
		return
	}
	p.series.dropBefore(cut)
	l := &p.live
	l.spans = slices.DeleteFunc(l.spans, func(s span) bool { return s.ended && s.end < cut })
	l.gaps = slices.DeleteFunc(l.gaps, func(g gap) bool { return !g.open && g.to < cut })
}

// sync makes the shown state the live one, with the charts' edge at now.
func (p *pane) sync(now time.Duration) {
	p.shown = p.live.clone()
	p.shown.now = now
	p.dirty = true
	p.boxStale = true
}

// redrawCharts redraws the sparklines when the shown state changed or the
// right edge moved into a new column.
func (p *pane) redrawCharts(st *styles, force bool) {
	right := int64(p.shown.now / p.charts.bucket())
	if !force && !p.dirty && p.charts.drawn && right == p.drawnRight {
		return
	}
	p.charts.draw(st, p.shown.now, p.series.points(), p.shown.spans, p.shown.gaps)
	p.drawnRight = right
	p.dirty = false
	p.boxStale = true
}

// boxKey is what a cached box was drawn for.
type boxKey struct {
	width   int
	focused bool
	window  time.Duration
}

// box returns the pane's bordered box as lines, drawing it only when the
// shown state, the charts or the geometry changed since the last time.
func (p *pane) box(st *styles, prog progress.Model, k boxKey) []string {
	if p.boxOK && !p.boxStale && p.boxFor == k {
		return p.boxLines
	}
	p.boxLines = p.render(st, prog, k)
	p.boxFor, p.boxOK, p.boxStale = k, true, false
	return p.boxLines
}

// render draws the whole pane box, k.width cells wide, from the cached
// charts. Every line is cut to the inner width, then framed.
func (p *pane) render(st *styles, prog progress.Model, k boxKey) []string {
	width, focused, window := k.width, k.focused, k.window
	iw := width - paneChrome
	if iw < 1 {
		iw = 1
	}
	lines := make([]string, 0, paneHeight(p.charts.rows))
	add := func(s string) { lines = append(lines, s) }

	in := &p.shown
	s := in.sample

	// Header: who the server is and how it saves.
	name, version, role := "", "", ""
	if in.ident != nil {
		name, version, role = in.ident.ServerName, in.ident.Version, in.ident.Role
	}
	if s != nil && s.Info.Version != "" {
		name, version = s.Info.ServerName, s.Info.Version
	}
	if s != nil {
		if s.Info.Role != "" {
			role = s.Info.Role
		}
	}
	if name == "" {
		name = "redis" // Redis has no server_name field
	}
	add(st.addr.r(p.addr) + st.dim.r(" · ") + st.value.r(name+" "+fmtOrNA(version)) +
		st.dim.r(" · ") + st.value.r(fmtOrNA(role)))

	var conn string
	switch in.state {
	case stConnecting:
		conn = st.warn.r("connecting…")
	case stConnected:
		conn = st.ok.r("connected")
	case stDisconnected:
		conn = st.err.r("✗ disconnected: " + fmtOrNA(in.reason) + ", retrying")
	}
	add(conn + st.dim.r(" · ") + saveMethod(st, s))

	// Charts, one label column and one sparkline per metric.
	for m := range numMetrics {
		labels := chartLabels(st, m, s, &p.charts)
		for y, row := range p.charts.lines[m] {
			label := ""
			if y < len(labels) {
				label = labels[y]
			}
			add(padRight(label, labelWidth) + row)
		}
	}
	add(padRight(st.dim.r(markLegend), labelWidth) + p.charts.marks)
	add(pingStats(st, s) + st.dim.r(fmt.Sprintf(" · window %s, %s/column", fmtWindow(window), fmtElapsedShort(p.charts.bucket()))))
	add(procLine(st, s))
	for _, l := range saveLines(st, prog, s, iw) {
		add(l)
	}
	for _, l := range reportLines(st, in.report) {
		add(l)
	}

	return frame(st, lines, width, focused)
}

// frame puts lines in a border width cells wide, one space of padding on
// each side, cutting or padding each line to the inner width. Done by hand
// rather than with a lipgloss border: this runs on every redraw and knows
// its lines are single-line already.
func frame(st *styles, lines []string, width int, focused bool) []string {
	edge, paint := st.edge, st.border
	if focused {
		edge, paint = st.edgeFocus, st.borderFocus
	}
	iw := max(width-paneChrome, 1)
	left, right := paint.r(edge.Left)+" ", " "+paint.r(edge.Right)
	out := make([]string, 0, len(lines)+2)
	out = append(out, paint.r(edge.TopLeft+strings.Repeat(edge.Top, iw+2)+edge.TopRight))
	for _, l := range lines {
		n := ansi.StringWidth(l)
		if n > iw {
			l, n = ansi.Truncate(l, iw, "…"), iw
		}
		out = append(out, left+l+strings.Repeat(" ", iw-n)+right)
	}
	out = append(out, paint.r(edge.BottomLeft+strings.Repeat(edge.Bottom, iw+2)+edge.BottomRight))
	return out
}

// fmtElapsedShort renders a column's time span, e.g. "1.9s" or "200ms".
func fmtElapsedShort(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	return sig3(d.Seconds()) + "s"
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

// chartLabels are the text left of a sparkline, one per row: name, current
// value and the largest value in the window, then, when the chart has a
// second row, the rate of vkwatch's own writers beside ops/s (squeezed into
// the first row as "w N" when there is only one).
func chartLabels(st *styles, m metric, s *source.Sample, c *chartSet) []string {
	name := [numMetrics]string{"used", "rss", "cow", "ops/s", "ping"}[m]
	cur, extra := na, ""
	if s != nil {
		switch m {
		case mUsed:
			cur = fmtOptBytes(s.Info.UsedMemory)
		case mRSS:
			cur = fmtOptBytes(s.Info.RSS)
		case mCOW:
			if v, ok := liveCOW(s); ok {
				cur = fmtBytes(v)
				if s.Save == nil {
					cur = "idle"
				}
			}
		case mOps:
			cur = fmtOptRate(s.OpsPerSec)
			if w, ok := s.WriterOpsPerSec.Get(); ok {
				if c.rows > 1 {
					extra = st.label.r("      writers ") + st.value.r(fmtRate(w)+"/s")
				} else {
					cur += " w " + fmtRate(w)
				}
			}
		case mPing:
			if w, ok := worstPing(s); ok {
				cur = fmtLatency(w)
			}
		}
	}
	top := na
	if c.winOK[m] {
		switch m {
		case mUsed, mRSS, mCOW:
			top = fmtBytes(int64(c.winMax[m]))
		case mOps:
			top = fmtRate(c.winMax[m])
		case mPing:
			top = fmtLatency(time.Duration(c.winMax[m]))
		}
	}
	// Fixed columns so the values of the five charts line up; a value too
	// long for its column is cut rather than pushing the chart right.
	main := st.series[m].r(fmt.Sprintf("%-5s", name)) + st.value.r(fitLeft(cur, 14)) +
		st.label.r(" max ") + st.value.r(fitLeft(top, 9))
	if extra == "" {
		return []string{main}
	}
	return []string{main, extra}
}

// pingStats summarises the last 10 s of PINGs.
func pingStats(st *styles, s *source.Sample) string {
	head := st.series[mPing].r("ping 10s ")
	if s == nil || s.Ping10s.Count == 0 {
		out := head + st.value.r(na)
		if s != nil && s.Ping10s.InFlight > 0 {
			out += st.warn.r(" in flight " + fmtLatency(s.Ping10s.InFlight))
		}
		return out
	}
	l := s.Ping10s
	out := head + st.label.r("p50 ") + st.value.r(fmtLatency(l.P50)) +
		st.label.r("  p99 ") + st.value.r(fmtLatency(l.P99)) +
		st.label.r("  max ") + st.value.r(fmtLatency(l.Max))
	if l.InFlight > l.Max {
		out += st.warn.r("  in flight " + fmtLatency(l.InFlight))
	}
	return out
}

// procLine shows what /proc says about a local server.
func procLine(st *styles, s *source.Sample) string {
	if s == nil || !s.Proc.RSS.OK {
		return st.label.r("proc ") + st.value.r(na)
	}
	return st.label.r("proc rss ") + st.value.r(fmtBytes(s.Proc.RSS.V)) +
		st.label.r("  child dirty ") + st.value.r(fmtOptBytes(s.Proc.ChildPrivateDirty))
}

// saveLines are the two lines of the running save: facts, then a bar.
func saveLines(st *styles, prog progress.Model, s *source.Sample, width int) []string {
	if s == nil || s.Save == nil {
		return []string{st.label.r("save ") + st.dim.r("none running"), ""}
	}
	sv := s.Save
	frac, fok := sv.Fraction().Get()
	pct := na
	if fok {
		pct = fmt.Sprintf("%.1f%%", frac*100)
	}
	facts := st.warn.r("▶ "+string(sv.Kind)) +
		st.label.r("  keys ") + st.value.r(fmtOptCount(sv.Processed)+"/"+fmtOptCount(sv.Total)) +
		st.label.r("  ") + st.value.r(pct) +
		st.label.r("  elapsed ") + st.value.r(fmtElapsed(sv.Elapsed)) +
		st.label.r("  ETA ") + st.value.r(fmtOptElapsed(sv.ETA)) +
		st.label.r("  cow ") + st.value.r(fmtOptBytes(sv.LiveCOW))
	bar := st.dim.r("progress n/a: the server reports no key counts")
	if fok {
		prog.Width = width
		bar = prog.ViewAs(frac)
	}
	return []string{facts, bar}
}

// reportLines are the three lines of what the last save cost.
func reportLines(st *styles, r *source.SaveReport) []string {
	if r == nil {
		return []string{st.label.r("last save ") + st.dim.r("none yet"), "", ""}
	}
	status := st.value.r(na)
	switch r.Status {
	case "":
	case "ok":
		status = st.ok.r("ok")
	default:
		status = st.err.r("✗ " + r.Status)
	}
	server := na
	if v, ok := r.ServerSeconds.Get(); ok {
		server = fmt.Sprintf("%ds", v)
	}
	sep := st.dim.r(" · ")
	l1 := st.label.r("last save ") + st.value.r(string(r.Kind)) + sep + status +
		sep + st.label.r("took ") + st.value.r(server) + st.label.r(" server, ") +
		st.value.r(fmtElapsed(r.Observed)) + st.label.r(" observed")
	l2 := st.label.r("  cow ") + st.value.r(fmtOptBytes(r.COW)) +
		st.label.r(" (live peak ") + st.value.r(fmtOptBytes(r.PeakLiveCOW)) + st.label.r(")") +
		sep + st.label.r("peak used ") + st.value.r(fmtOptDelta(r.PeakUsedDelta)) +
		sep + st.label.r("rss ") + st.value.r(fmtOptDelta(r.PeakRSSDelta))
	// What /proc saw, only where it could look (a local server): for a
	// remote one these would be n/a on every report.
	if r.PeakChildPrivateDirty.OK {
		l2 += sep + st.label.r("child dirty ") + st.value.r(fmtBytes(r.PeakChildPrivateDirty.V))
	}
	worst := na
	if r.PingDuring.Count > 0 {
		worst = fmtLatency(r.PingDuring.Max)
	}
	l3 := st.label.r("  ops/s ") + st.value.r(fmtOptRate(r.OpsBefore)) +
		st.label.r(" before → ") + st.value.r(fmtOptRate(r.OpsDuring)) + st.label.r(" during")
	if r.WriterOpsBefore.OK || r.WriterOpsDuring.OK {
		l3 += sep + st.label.r("writers ") + st.value.r(fmtOptRate(r.WriterOpsBefore)) +
			st.label.r(" → ") + st.value.r(fmtOptRate(r.WriterOpsDuring))
	}
	l3 += sep + st.label.r("worst ping ") + st.value.r(worst)
	if r.PingBefore.Count > 0 {
		l3 += st.label.r(" (before ") + st.value.r(fmtLatency(r.PingBefore.Max)) + st.label.r(")")
	}
	return []string{l1, l2, l3}
}
