package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/vkwatch/vkwatch/ui/fleetview"
	"github.com/vkwatch/vkwatch/ui/helpview"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/view"
)

// The views and how they share the screen: made from stack.go's table,
// what they draw from (ctx), their keys and the help made of them, the
// stack of those open, and the layout of the body and the help.

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
// BGSAVE CANCEL, and M where it cannot save both ways: their keys still
// answer, with a note saying why, but the help does not offer them.
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
	if p, _, _, why := m.methodTarget(); p != nil && why != "" {
		for _, k := range m.keys.Method.Keys() {
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

// setStack makes s the views open: a view newly open hears of it
// (opened), the keys follow, and the layout when the full help or the
// base changed.
func (m *Model) setStack(s viewStack) {
	old := m.stack
	m.stack = s
	for _, id := range s {
		if o, ok := m.views[id].(view.Opener); ok && !old.has(id) {
			o.Opened()
		}
	}
	m.syncKeys()
	if s.has(viewHelp) != old.has(viewHelp) || s.base() != old.base() {
		m.relayout()
	}
}

// relayout picks the layout for the terminal size and sizes the panes.
func (m *Model) relayout() {
	m.helpView().SetSize(m.width, 0)
	m.lay = m.pickLayout(m.stack.has(viewHelp))
	if m.lay.tooSmall && m.lay.fullHelp {
		// Full help is a courtesy: drop it before dropping the panes.
		m.lay = m.pickLayout(false)
	}
	// Each view lays itself out in the body: the panes share it
	// (panesview.Fit).
	for id, v := range m.views {
		if v != nil && views[id].kind != kindFoot {
			v.SetSize(m.width, m.bodyHeight())
		}
	}
	m.store.SetKeep(m.keepFor())
}

// pickLayout sizes the help, and says whether what the base shows fits
// in the rest: the fleet's rows need the width of a pane and room for a
// row; the panes, room for one (panesview.Fit).
func (m *Model) pickLayout(fullHelp bool) layout {
	helpH := m.helpView().Height(m.keyHelp(fullHelp), fullHelp)
	avail := m.height - 2 - helpH // title line, footer line, help
	lay := layout{fullHelp: fullHelp, helpH: helpH}
	if m.stack.base() == viewFleet {
		lay.tooSmall = m.fleet.Len() == 0 || m.width < panesview.MinWidth || avail < fleetview.HeadLines+2
		return lay
	}
	lay.tooSmall = panesview.Fit(len(m.panes.Shown()), m.width, avail).Mode == panesview.TooSmall
	return lay
}

// minSize is the smallest terminal that shows one pane with short help.
func minSize() (int, int) { return panesview.MinWidth, panesview.MinHeight + 3 }

// bodyHeight is the lines between the title line and the footer.
func (m *Model) bodyHeight() int { return m.height - 2 - m.lay.helpH }

// helpView is the help's component: the model sizes it and writes it
// at the bottom of every frame.
func (m *Model) helpView() *helpview.Model { return m.views[viewHelp].(*helpview.Model) }

// keepFor is how far back points are kept: the window, or more when a wide
// terminal's columns at one sample each span longer.
func (m *Model) keepFor() time.Duration {
	keep := m.cfg.History
	widths := m.panes.ChartWidths()
	if m.fleet != nil {
		widths = append(widths, m.fleet.ChartWidth())
	}
	for _, w := range widths {
		if w > 0 {
			keep = max(keep, time.Duration(w)*plot.BucketOf(m.cfg.History, m.cfg.Interval, w))
		}
	}
	return keep + m.cfg.IdleInterval*4
}
