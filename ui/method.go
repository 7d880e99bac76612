package ui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/words"
)

// The method key (M, issue 39): on a server that can save both ways
// (Valkey 9.2 started with forkless-infrastructure-enabled yes), it
// switches bgsave-default-method with CONFIG SET, after asking. It is
// the user's own change, made in so many words: vkwatch does not put it
// back on quit (the help says so: "kept on quit"), unlike the settings
// bench changes for its runs, which it restores.

// methodTarget is the server M would switch (nil for none), the command
// that switches it and the method it switches to; why says why it
// cannot, empty when it can.
func (m *Model) methodTarget() (p *target, args []string, to, why string) {
	t := m.targets(false)
	if len(t) == 0 {
		return nil, nil, "", ""
	}
	p = &t[0]
	v := m.store.Live(p.id)
	s := v.Latest
	switch {
	case s == nil:
		return p, nil, "", "no sample from " + p.addr + " yet: its save method is not known"
	case s.Config.Err != "":
		return p, nil, "", p.addr + "'s save method is not known (CONFIG GET: " + s.Config.Err + ")"
	case s.Config.Method == "":
		return p, nil, "", p.addr + " saves by fork only: no bgsave-default-method (Valkey 9.2 or later has it)" + words.ServerOf(v)
	}
	args, to, ok := source.MethodSwitch(s.Config)
	if !ok {
		return p, nil, "", p.addr + " cannot save forkless: forkless-infrastructure-enabled is not yes, and only a restart with it yes changes that"
	}
	return p, args, to, ""
}

// switchMethod switches the focused server's save method (M) once the
// user has confirmed by pressing M again; on a server that cannot save
// both ways, or read-only, it sends nothing and the footer says why.
func (m *Model) switchMethod(confirmed bool) tea.Cmd {
	p, args, to, why := m.methodTarget()
	switch {
	case p == nil:
		return nil
	case m.cfg.ReadOnly:
		m.setFooter(footEntry{node: p.id, kind: footErr, text: "read-only: the save method of " + p.addr + " is not switched (" + m.readOnlyWhy + ")"})
		return nil
	case why != "":
		m.setFooter(footEntry{node: p.id, kind: footErr, text: why})
		return nil
	case confirmed:
		return m.send(false, args...)
	}
	from := m.store.Live(p.id).Latest.Config.Method
	m.confirm = pending{key: m.keys.Method, what: "switch to " + to, other: "keep " + from}
	m.setFooter(footEntry{node: p.id, kind: footErr, text: "switch " + p.addr + " to " + to + " saves (kept on quit)? press M again"})
	return nil
}

// methodNews is what an accepted method switch means, after the
// server's answer; empty for any other command.
func methodNews(c *source.CommandResult) string {
	to, ok := strings.CutPrefix(c.Command, "CONFIG SET bgsave-default-method ")
	if !ok {
		return ""
	}
	news := ": its next BGSAVE saves " + to
	if to == "forkless" {
		news += " unless a module forces a fork"
	}
	return news + "; kept after vkwatch quits"
}
