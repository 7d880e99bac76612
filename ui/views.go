package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/ui/fleetview"
	"github.com/vkwatch/vkwatch/ui/view"
)

// makeViews makes the model's views.
func (m *Model) makeViews() {
	o := viewOpts{panes: m.panes, fleet: m.fleet}
	m.views = make([]view.Component, len(views))
	for id, v := range views {
		m.views[id] = v.make(o)
	}
}

// ctx is what the views draw from now.
func (m *Model) ctx() *view.Context {
	c := &view.Context{Styles: m.st, Prog: m.prog, Store: m.store, PerPane: m.perPane, Full: m.lay.fullHelp, Prompt: m.prompt()}
	if m.fleet != nil {
		c.Nodes = m.fleet.IDs()
	} else {
		c.Nodes = m.panes.Shown()
	}
	c.Help = m.keyHelp(c.Full)
	return c
}

// prompt is what the help line asks of the user now, if anything.
func (m *Model) prompt() view.Prompt {
	p := view.Prompt{}
	if c := m.confirm; c.key.Enabled() {
		p.Key, p.What, p.Other = c.key.Help().Key, c.what, c.other
	}
	if m.fleet != nil && m.fleet.Held() {
		p.Held = m.fleet.HeldWarning()
	}
	return p
}

// viewKey hands a key to the views: the one that fills the body, then
// the base (tab still moves focus under the table), then the views'
// toggles. It reports whether one took it; what the view asks of the
// model comes back as a message, handled here at once.
func (m *Model) viewKey(k tea.KeyMsg) bool {
	body, base := m.stack.body(), m.stack.base()
	c := m.ctx()
	took, ask := m.views[body].Update(c, k)
	if !took && body != base {
		took, ask = m.views[base].Update(c, k)
	}
	if took {
		m.request(ask)
		return true
	}
	for id, v := range m.views {
		if t := toggleOf(v); t != nil && key.Matches(k, *t) {
			m.setStack(m.stack.toggle(viewID(id)))
			return true
		}
	}
	return false
}

// request does what a view asked for (nil: nothing): the model's own
// state (the panes shown, the footer) changes only here.
func (m *Model) request(msg tea.Msg) {
	switch msg := msg.(type) {
	case view.NoteMsg:
		m.setFooter(footEntry{kind: footNote, text: string(msg)})
	case fleetview.OpenMsg:
		m.openNodes(msg)
	}
}

// toggleOf is v's toggle, nil for none (or no view).
func toggleOf(v view.Component) *key.Binding {
	if v == nil {
		return nil
	}
	return v.Toggle()
}

// helpKeys are the bindings the views' help lines take from the model.
func (m *Model) helpKeys() view.HelpKeys {
	h := view.HelpKeys{Keys: m.keys.Keys, Toggles: map[view.Name]key.Binding{}, Next: m.panes.Next}
	for id, v := range m.views {
		if t := toggleOf(v); t != nil {
			h.Toggles[views[id].name] = *t
		}
	}
	return h
}

// syncKeys switches every binding to the views open.
func (m *Model) syncKeys() {
	m.keys.sync(m.stack)
	body := m.stack.body()
	for id, v := range m.views {
		if v != nil {
			v.SyncKeys(view.Open{Fills: viewID(id) == body, Base: viewID(id) == m.stack.base(),
				Covered: m.stack.covered(), Help: m.stack.has(viewHelp), Shown: len(m.panes.Shown())})
		}
	}
}

// keyHelp is the help of what is open: the short line of the view that
// fills the body; with full, the full help's columns: the model's
// commands, the bases' keys, the keys of the views in their place, and
// the model's general keys with the help's own.
func (m *Model) keyHelp(full bool) view.KeyHelp {
	hk := m.helpKeys()
	out := view.KeyHelp{Short: m.offered(m.views[m.stack.body()].ShortHelp(hk))}
	if !full {
		return out
	}
	cols := make([][]key.Binding, kindFoot+1)
	for id, v := range m.views {
		if v != nil {
			k := views[id].kind
			cols[k] = append(cols[k], v.FullHelp()...)
		}
	}
	g := m.keys
	general := append([]key.Binding{g.Scale, g.Close, g.Pause, g.Shot}, cols[kindFoot]...)
	out.Full = [][]key.Binding{g.commands(), cols[kindBase], cols[kindBody], append(general, g.Quit, g.Interrupt)}
	if m.cfg.ReadOnly {
		out.Full = out.Full[1:]
	}
	for i := range out.Full {
		out.Full[i] = m.offered(out.Full[i])
	}
	return out
}

// offered leaves out of bs the commands a read-only model (a replay,
// --read-only) does not send, and x where the focused server has no
// BGSAVE CANCEL: their keys still answer, with a note saying why, but
// the help does not offer them.
func (m *Model) offered(bs []key.Binding) []key.Binding {
	hidden := map[string]bool{}
	if m.cfg.ReadOnly {
		for _, c := range append(m.keys.commands(), m.keys.Both) {
			for _, k := range c.Keys() {
				hidden[k] = true
			}
		}
	}
	if p, can := m.cancelTarget(); p != nil && !can {
		for _, k := range m.keys.Cancel.Keys() {
			hidden[k] = true
		}
	}
	if len(hidden) == 0 {
		return bs
	}
	out := bs[:0:0]
	for _, b := range bs {
		if ks := b.Keys(); len(ks) == 0 || !hidden[ks[0]] {
			out = append(out, b)
		}
	}
	return out
}
