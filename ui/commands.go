package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The commands the keys send to servers (b, a, B, A, x; M in method.go): to whom, the
// confirmation a risky fork or a cancel waits for, and the tea.Cmd that
// sends them through Config.Send, out of Update.

// target is a server a command goes to, and how the footer names it.
type target struct {
	id   source.NodeID
	addr string
}

// targets are the servers a command goes to: the focused one (in the
// fleet view, the selected row's), or every one shown.
func (m *Model) targets(all bool) []target {
	switch {
	case m.stack.base() == viewFleet:
		id := m.fleet.Selected()
		if addr, ok := m.fleet.Addr(id); ok {
			m.panes.Add(id, addr) // its pane, for when it is opened
			addr, _ = m.panes.Addr(id)
			return []target{{id, addr}}
		}
		return nil
	case all:
		ids := m.panes.Shown()
		out := make([]target, len(ids))
		for i, id := range ids {
			out[i].id = id
			out[i].addr, _ = m.panes.Addr(id)
		}
		return out
	}
	if id, addr, ok := m.panes.Focused(); ok {
		return []target{{id, addr}}
	}
	return nil
}

// fork sends BGSAVE (b, or B for all servers) or BGREWRITEAOF (a, A),
// unless the fork either starts could run a server out of memory (see
// forkRisk) and the user has not confirmed by pressing the same key again:
// then nothing is sent, not even to the servers that raised no warning, and
// the footer says why.
func (m *Model) fork(all, confirmed bool, command string) tea.Cmd {
	if confirmed || !m.canSend() {
		return m.send(all, command)
	}
	aof := command == "BGREWRITEAOF"
	var warned []footEntry
	for _, p := range m.targets(all) {
		v := m.store.Live(p.id)
		if text, ok := words.ForkRisk(p.addr, v.Latest, v.Report, aof, v.Forecast); ok {
			warned = append(warned, footEntry{node: p.id, kind: footErr, text: text})
		}
	}
	if len(warned) == 0 {
		return m.send(all, command)
	}
	verb, k := "save", m.keys.Save
	switch {
	case aof && all:
		verb, k = "rewrite", m.keys.RewriteAll
	case aof:
		verb, k = "rewrite", m.keys.Rewrite
	case all:
		k = m.keys.SaveAll
	}
	m.confirm = pending{key: k, what: verb + " anyway", other: "cancel"}
	again := "; press " + k.Help().Key + " again to " + verb + " anyway"
	if len(warned) == 1 {
		warned[0].text += again
	} else {
		warned = append(warned, footEntry{kind: footErr, text: again[2:]})
	}
	for _, e := range warned {
		m.setFooter(e)
	}
	return nil
}

// cancelSave sends BGSAVE CANCEL to the focused server (x), once the user
// has confirmed by pressing x again: a save cancelled by mistake is lost
// work. It cancels a running RDB save, or one scheduled behind an AOF
// rewrite (Valkey 8.1+); the footer shows the server's answer, whatever
// it is. A server known not to have it (Redis, Valkey before 8.1) is
// sent nothing: the footer says so, and the help does not offer x there.
func (m *Model) cancelSave(confirmed bool) tea.Cmd {
	t := m.targets(false)
	if p, can := m.cancelTarget(); p != nil && !can && !m.cfg.ReadOnly {
		// Redis, and Valkey before 8.1, answer BGSAVE CANCEL with a
		// syntax error and save on: say so rather than send it.
		m.setFooter(footEntry{node: p.id, kind: footErr, text: p.addr + " cannot cancel a save: BGSAVE CANCEL needs Valkey 8.1 or later" + words.ServerOf(m.store.Live(p.id))})
		return nil
	}
	if confirmed || !m.canSend() {
		return m.send(false, "BGSAVE", "CANCEL")
	}
	if len(t) == 0 {
		return nil
	}
	p := t[0]
	what := "no RDB save is running on " + p.addr + " (a scheduled one would be cancelled);"
	if s := m.store.Live(p.id).Latest; s != nil && s.Save != nil && s.Save.Kind != source.SaveAOF {
		what = "cancel the " + string(s.Save.Kind) + " running on " + p.addr
		if f, ok := s.Save.Fraction().Get(); ok {
			what += fmt.Sprintf(" (%.0f%% done)", f*100)
		}
		what += "?"
	}
	// Any other key keeps the save going.
	m.confirm = pending{key: m.keys.Cancel, what: "send BGSAVE CANCEL", other: "keep it"}
	m.setFooter(footEntry{node: p.id, kind: footErr, text: what + " press x again to send BGSAVE CANCEL"})
	return nil
}

// cancelTarget is the server x would cancel a save on (nil for none), and
// whether it has BGSAVE CANCEL.
func (m *Model) cancelTarget() (*target, bool) {
	t := m.targets(false)
	if len(t) == 0 {
		return nil, false
	}
	return &t[0], words.CanCancel(m.store.Live(t[0].id))
}

// canSend reports whether a command may be sent at all, without saying why
// not: send does.
func (m *Model) canSend() bool {
	return len(m.targets(false)) > 0 && !m.cfg.ReadOnly && m.cfg.Send != nil
}

// send returns the command that sends args to the focused server, or to
// every server at once (one Cmd each in a tea.Batch, so they run
// concurrently rather than one after the other's answer).
func (m *Model) send(all bool, args ...string) tea.Cmd {
	if len(m.targets(all)) == 0 {
		return nil
	}
	name := strings.Join(args, " ")
	if m.cfg.ReadOnly {
		m.setFooter(footEntry{kind: footErr, text: "read-only: " + name + " not sent (" + m.readOnlyWhy + ")"})
		return nil
	}
	if m.cfg.Send == nil {
		m.setFooter(footEntry{kind: footErr, text: "cannot send " + name + ": no command channel"})
		return nil
	}
	targets := m.targets(all)
	send := m.cfg.Send
	cmds := make([]tea.Cmd, 0, len(targets))
	for _, p := range targets {
		m.setFooter(footEntry{node: p.id, kind: footNote, text: fmt.Sprintf("sending %s to %s…", name, p.addr)})
		cmds = append(cmds, func() tea.Msg {
			send(p.id, args...)
			return nil
		})
	}
	return tea.Batch(cmds...)
}
