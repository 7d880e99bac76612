package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The footer line: commands' answers, notes and warnings, each said once
// per server, stamped with when it happened, aging by the events' clock.

// stuckPrefix starts the footer line of a stuck save.
const stuckPrefix = "⚠ stuck? "

// endFooter takes the news of a save's start out of the footer when the
// save ends, and says how a save that did not end ok ended and what says
// so: an aborted save reads like a good one on its status field alone.
func (m *Model) endFooter(node source.NodeID, r *source.SaveReport, at time.Time) {
	m.footer = slices.DeleteFunc(m.footer, func(e footEntry) bool { return e.node == node && e.saveStart })
	if r == nil {
		return
	}
	e := footEntry{node: node, kind: footErr, wall: at}
	switch r.Status {
	case source.StatusOK, "":
		return
	case source.StatusCancelled:
		e.kind = footNote
	}
	e.text = fmt.Sprintf("the %s on %s ended %s: %s", r.Kind, m.addrOf(node), r.Status, r.Evidence)
	m.setFooter(e)
}

// stuckFooter keeps a node's footer line about a stuck save in step with
// its view: shown (and its seconds updated) while the save looks stuck,
// gone when it moves again or ends. Other footer lines are left alone.
func (m *Model) stuckFooter(id source.NodeID) {
	v := m.store.Live(id)
	// Only while the latest sample shows the save: a sample older than
	// it, folded later, can leave the forecast's verdict on a save that
	// has ended.
	if v.Stuck != "" && v.Latest != nil && v.Latest.Save != nil {
		text := stuckPrefix + "the save on " + m.addrOf(id) + ": " + v.Stuck
		if words.CanCancel(v) {
			text += "; x cancels it (BGSAVE CANCEL)"
		}
		e := footEntry{node: id, kind: footErr, text: text}
		for _, old := range m.footer {
			if old.node == id && strings.HasPrefix(old.text, stuckPrefix) {
				e.wall = old.wall // since when it looks stuck
			}
		}
		m.setFooter(e)
		return
	}
	for i, e := range m.footer {
		if e.node == id && strings.HasPrefix(e.text, stuckPrefix) {
			m.footer = append(m.footer[:i], m.footer[i+1:]...)
			return
		}
	}
}

// answer puts a command's answer in the footer, in place of the note or
// answer it had for that server. A save's start stays while it runs.
func (m *Model) answer(node source.NodeID, c *source.CommandResult, at time.Time) {
	addr := m.addrOf(node)
	e := footEntry{node: node, kind: footOK, wall: at}
	if c.OK() {
		e.text = fmt.Sprintf("%s on %s: %s", c.Command, addr, c.Reply) + methodNews(c)
		e.saveStart = c.Command == "BGSAVE" || c.Command == "BGREWRITEAOF"
	} else {
		e.kind = footErr
		e.text = fmt.Sprintf("✗ %s on %s: %s", c.Command, addr, c.Err)
	}
	m.setFooter(e)
}

// setFooter replaces the entry for e's server, or appends one; it is
// stamped now by the events' clock, and with the wall time now unless
// it says when it happened.
func (m *Model) setFooter(e footEntry) {
	e.at = m.clock
	if e.wall.IsZero() {
		e.wall = m.cfg.Now()
	}
	for i := range m.footer {
		if m.footer[i].node == e.node {
			m.footer[i] = e
			return
		}
	}
	m.footer = append(m.footer, e)
}

// ageFooter drops the footer's entries older than footAge by the events'
// clock: a save's start only once no save runs on its server (its end
// took it out already, unless the save ended before the answer came).
// While a confirmation is pending every entry stays.
func (m *Model) ageFooter() {
	if len(m.confirm.key.Keys()) > 0 {
		return
	}
	m.footer = slices.DeleteFunc(m.footer, func(e footEntry) bool {
		if m.clock-e.at < footAge {
			return false
		}
		if e.saveStart {
			s := m.store.Live(e.node).Latest
			return s == nil || s.Save == nil
		}
		return true
	})
}

// footerLine renders the latest command answers and notes on one line.
func (m *Model) footerLine() string {
	parts := make([]string, 0, len(m.footer))
	said := ""
	for _, e := range m.footer {
		// When it happened, first (once for entries of one second): a
		// footer line is news.
		when := e.wall.Format("15:04:05")
		if when == said {
			when = ""
		} else {
			said, when = when, m.st.Dim.R(when+" ")
		}
		switch e.kind {
		case footNote:
			parts = append(parts, when+m.st.Dim.R(e.text))
		case footOK:
			parts = append(parts, when+m.st.OK.R(e.text))
		case footErr:
			parts = append(parts, when+m.st.Err.R(e.text))
		}
	}
	return text.FitLine(strings.Join(parts, m.st.Dim.R("  │  ")), m.width)
}

// shotNote is the footer's word on a picture S took.
func shotNote(msg shotMsg) footEntry {
	if msg.err != nil {
		return footEntry{kind: footErr, text: "✗ screen not saved: " + inert.Text(msg.err.Error())}
	}
	return footEntry{kind: footOK, text: "screen saved to " + inert.Text(msg.path)}
}

// addrOf is how a node is named in the footer.
func (m *Model) addrOf(id source.NodeID) string {
	if addr, ok := m.panes.Addr(id); ok {
		return addr
	}
	if m.fleet != nil {
		if addr, ok := m.fleet.Addr(id); ok {
			return addr
		}
	}
	return inert.Text(string(id))
}
