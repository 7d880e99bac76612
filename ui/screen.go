package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
)

// The frame: brought up to date from the store (refresh) and put
// together from the cached drawings of the views, the title line, the
// footer and the help (compose).

// refresh brings every pane's charts up to date with the store (frozen
// while paused), draws what changed and rebuilds the frame.
//
// Only what is on screen is brought up to date: the panes shown, or the
// fleet view's rows. A pane or a row that comes back on screen catches up
// from the store, which kept its history meanwhile.
func (m *Model) refresh() {
	now := m.store.Now()
	// Charts hidden behind the reports table or the cost view wait:
	// closing it draws them.
	covered := m.stack.covered()
	c := plot.Cadence{Interval: m.cfg.Interval, Rest: m.cfg.IdleInterval}
	if m.stack.base() == viewFleet && !covered {
		m.fleet.Refresh(m.st, m.store, now, m.cfg.History, c, m.perPane)
	}
	m.panes.Refresh(m.st, m.store, now, m.cfg.History, c, m.perPane, covered)
	m.compose()
}

// compose builds the frame from the cached drawings: the title line, the
// lines of the view that fills the body, the footer and the help.
func (m *Model) compose() {
	if m.lay.tooSmall {
		m.view = m.tooSmall()
		return
	}
	var b strings.Builder
	b.WriteString(m.topLine())
	body := m.bodyHeight()
	c := m.ctx()
	lines := m.views[m.stack.body()].View(c)
	for _, l := range lines[:min(len(lines), body)] {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	// The footer and the help stay at the bottom of the terminal.
	for range body - len(lines) {
		b.WriteByte('\n')
	}
	m.finish(&b, c)
}

// tooSmall is the frame of a terminal too small for one pane.
func (m *Model) tooSmall() string {
	w, h := minSize()
	msg := fmt.Sprintf("terminal too small: %dx%d\nvkwatch needs at least %dx%d\n\nq quits", m.width, m.height, w, h)
	if m.panes.Len() == 0 && (m.fleet == nil || m.fleet.Len() == 0) {
		msg = "vkwatch: no servers to watch\n\nq quits"
	}
	// Cut each line to the terminal: Place cannot shrink what is wider.
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = text.FitLine(l, m.width)
	}
	frame := lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center,
		m.st.TooSmall.Render(strings.Join(lines, "\n")))
	if m.cfg.ASCII {
		frame = style.ASCIIFrame(frame)
	}
	return frame
}

// finish adds the footer and the help to the frame in b and keeps it.
func (m *Model) finish(b *strings.Builder, c *view.Context) {
	b.WriteByte('\n')
	b.WriteString(m.footerLine())
	for _, l := range m.helpView().View(c) {
		b.WriteByte('\n')
		b.WriteString(l)
	}
	m.view = b.String()
	if m.cfg.ASCII {
		m.view = style.ASCIIFrame(m.view)
	}
}

// setStatus sets the status shown at the right of the title line.
func (m *Model) setStatus(s string) {
	if s != m.status {
		m.status = s
		m.compose()
	}
}

// topLine is the title, the banner and its hint, how often INFO samples,
// and the marks that change what the panes mean: paused, or only one of
// two panes shown. Short of room, the sampling note goes, then the
// banner is cut: the hint and the marks stay.
func (m *Model) topLine() string {
	head := m.st.Top.R("vkwatch")
	if m.fleet != nil {
		head += m.st.Dim.R(" · ") + m.st.Banner.R(m.fleet.Title())
	}
	banner, hint, note := "", "", ""
	if m.cfg.Banner != "" {
		banner = m.st.Dim.R(" · ") + m.st.Banner.R(m.cfg.Banner)
	}
	if m.cfg.Hint != "" {
		hint = m.st.Dim.R(" — ") + m.st.Banner.R(m.cfg.Hint)
	}
	if m.fleet == nil {
		// The fleet view says it in its PING line, from the topology.
		note = m.st.Dim.R(" · " + text.SamplingNote(m.cfg.IdleInterval, m.cfg.Interval, "while saving"))
	}
	// The marks on the right say what the panes mean (paused, which pane,
	// playback): cut the banner before them. Short of room, the sampling
	// note goes first, then the banner is cut; the hint stays.
	fit := func(r string) string {
		left := head + banner + hint + note
		if room := m.width - lipgloss.Width(r) - 1; room >= 10 && lipgloss.Width(left) > room {
			left = head + banner + hint
			if lipgloss.Width(left) > room {
				keep := room - lipgloss.Width(head+hint)
				left = head + text.FitLine(banner, max(keep, 0)) + hint
			}
			left = text.FitLine(left, room)
		}
		return left
	}
	r := m.topMarks(false)
	left := fit(r)
	if short := m.topMarks(true); short != r {
		// Without the scales' key (the help has it), if the left says
		// more then.
		if l := fit(short); lipgloss.Width(l) > lipgloss.Width(left) {
			left, r = l, short
		}
	}
	gap := max(m.width-lipgloss.Width(left)-lipgloss.Width(r), 1)
	return text.FitLine(left+strings.Repeat(" ", gap)+r, m.width)
}

// topMarks are the title line's marks on the right: the playback's
// position, which pane of two shows, the scales, PAUSED; short leaves out
// the key that switches the scales.
func (m *Model) topMarks(short bool) string {
	var right []string
	if m.status != "" {
		right = append(right, m.st.Banner.R(m.status))
	}
	if !m.stack.covered() {
		if n := len(m.panes.Shown()); m.panes.Mode() == panesview.Single && n > 1 {
			right = append(right, m.st.Dim.R(fmt.Sprintf("pane %d/%d, tab switches", m.panes.Focus()+1, n)))
		}
		if m.stack.base() == viewPanes {
			right = append(right, m.scaleMark(short)) // the fleet view says it in its own line
		}
	}
	if m.paused {
		right = append(right, m.st.Paused.R(" PAUSED at "+m.pausedAt.Format("15:04:05")+" · p resumes "))
	}
	return strings.Join(right, "  ")
}

// scaleMark says which scales are in force, and unless short, the key
// that switches them.
func (m *Model) scaleMark(short bool) string {
	mark, key := m.st.Value.R("scales shared"), m.st.Dim.R(" (s: per pane)")
	if m.perPane {
		mark, key = m.st.Warn.R("scales per pane"), m.st.Dim.R(" (s: shared)")
	}
	if short {
		return mark
	}
	return mark + key
}
