package ui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// Which view is open is one value: a stack of views. Its bottom is the
// base, what the charts are drawn in (the panes of the servers shown, or
// a fleet's rows); above it, in the order they were opened, the views
// over it: the reports table or the cost curves in the base's place (at
// most one of them), and the full help, which takes the bottom lines.
// esc closes the top one, so the help opened over the table closes
// before the table, and the table opened over the help before the help.

// viewID names a view: its place in the views table below.
type viewID int

// The views the model itself opens and closes by name. A view opened
// only by its own key needs no name: its place in the table is its id.
const (
	viewFleet viewID = iota // a fleet's rows, one per node (a base)
	viewPanes               // the panes of the servers shown (a base)
	viewCost                // the save cost curves, in the base's place
	viewTable               // the save reports, in the base's place
	viewHelp                // the full help, in the help line's place
)

// viewKind says where a view goes on the screen.
type viewKind int

const (
	kindBase viewKind = iota // the charts' view: at the bottom of the stack
	kindBody                 // in the base's place, one at a time
	kindFoot                 // in the help line's place
)

// component is one view, the way bubbles and gh-dash build theirs: sized
// by SetSize, handed keys by Update, drawn by View, with its own key
// bindings, from which the help is made (ShortHelp while it fills the
// body, FullHelp its share of the full help's columns). The model is its
// context (styles, store, panes shown), as gh-dash's ProgramContext is.
type component interface {
	// SetSize gives the view the body: the terminal's width and the lines
	// between the title line and the footer (for the help: its lines).
	SetSize(w, h int)
	// Update handles a key; it reports whether the key was the view's.
	// The view that fills the body is asked first, then the base.
	Update(c *Model, k tea.KeyMsg) bool
	// View returns the view's lines.
	View(c *Model) []string
	// Toggle is the key that opens and closes the view; nil for a base.
	Toggle() *key.Binding
	// SyncKeys enables the view's keys for the views open: a view's keys
	// work only while it is on screen.
	SyncKeys(c *Model)
	// ShortHelp is the help line while the view fills the body: its keys
	// and the model's, in the order they are cut from the end.
	ShortHelp(c *Model) []key.Binding
	// FullHelp is the view's share of the full help: its keys, listed in
	// the column of its kind.
	FullHelp(c *Model) []key.Binding
}

// views is every view the model can show, by id, in the order the full
// help lists their keys. make returns nil for a view this model has not
// (the fleet's rows outside a fleet). A new view is a file with its
// component and one line here.
var views = [...]struct {
	kind viewKind
	make func(m *Model) component
}{
	viewFleet: {kindBase, newFleetComponent},
	viewPanes: {kindBase, newPanesView},
	viewCost:  {kindBody, newCostView},
	viewTable: {kindBody, newReportTable},
	viewHelp:  {kindFoot, newHelpView},
}

// makeViews makes the model's views.
func (m *Model) makeViews() {
	m.views = make([]component, len(views))
	for id, v := range views {
		m.views[id] = v.make(m)
	}
}

// viewKey hands a key to the views: the one that fills the body, then
// the base (tab still moves focus under the table), then the views'
// toggles. It reports whether one took it.
func (m *Model) viewKey(k tea.KeyMsg) bool {
	body, base := m.stack.body(), m.stack.base()
	if m.views[body].Update(m, k) || (body != base && m.views[base].Update(m, k)) {
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

// fills reports whether v is the view that fills the body: a view's
// keys work only then (SyncKeys), unless it is a base and says otherwise.
func (m *Model) fills(v component) bool { return m.views[m.stack.body()] == v }

// toggleOf is v's toggle, nil for none (or no view).
func toggleOf(v component) *key.Binding {
	if v == nil {
		return nil
	}
	return v.Toggle()
}

// toggleKey is the binding that opens view id, disabled when the model
// has no such view: for one view's help line to name another's key.
func (m *Model) toggleKey(id viewID) key.Binding {
	if t := toggleOf(m.views[id]); t != nil {
		return *t
	}
	return key.Binding{}
}

// syncKeys switches every binding to the views open.
func (m *Model) syncKeys() {
	m.keys.sync(m.stack)
	for _, v := range m.views {
		if v != nil {
			v.SyncKeys(m)
		}
	}
}

// carryView takes over from old what the user chose to look at: the
// views open, focus, the scales, a fleet's nodes opened, and what each
// view keeps of its own (carry: where the table was scrolled, the cost
// view's figure, the fleet's selection). Replay rebuilds the model when
// it seeks back.
func (m *Model) carryView(old *Model) {
	m.focus, m.perPane = old.focus, old.perPane
	if m.fleet != nil && old.stack.base() == viewPanes {
		m.shown = nil
		for _, p := range old.shown {
			m.shown = append(m.shown, m.paneFor(p.id, p.addr))
		}
	}
	m.setStack(old.stack)
	for id, v := range m.views {
		if c, ok := v.(interface{ carry(component) }); ok && old.views[id] != nil {
			c.carry(old.views[id])
		}
	}
}

// openHelp is the help of what is open, in bubbles/help's KeyMap shape:
// the short line of the view that fills the body; the full help's
// columns the model's commands, the bases' keys, the keys of the views
// in their place, and the model's general keys with the help's own.
type openHelp struct{ m *Model }

// ShortHelp implements help.KeyMap.
func (h openHelp) ShortHelp() []key.Binding {
	return h.m.offered(h.m.views[h.m.stack.body()].ShortHelp(h.m))
}

// offered leaves out of bs the commands a read-only model (a replay,
// --read-only) does not send: their keys still answer, with the note
// saying why, but the help does not offer them.
func (m *Model) offered(bs []key.Binding) []key.Binding {
	if !m.cfg.ReadOnly {
		return bs
	}
	command := map[string]bool{}
	for _, c := range append(m.keys.commands(), m.keys.Both) {
		for _, k := range c.Keys() {
			command[k] = true
		}
	}
	out := bs[:0:0]
	for _, b := range bs {
		if ks := b.Keys(); len(ks) == 0 || !command[ks[0]] {
			out = append(out, b)
		}
	}
	return out
}

// FullHelp implements help.KeyMap.
func (h openHelp) FullHelp() [][]key.Binding {
	cols := make([][]key.Binding, kindFoot+1)
	for id, v := range h.m.views {
		if v != nil {
			k := views[id].kind
			cols[k] = append(cols[k], v.FullHelp(h.m)...)
		}
	}
	g := h.m.keys
	general := append([]key.Binding{g.Scale, g.Close, g.Pause, g.Shot}, cols[kindFoot]...)
	all := [][]key.Binding{g.commands(), cols[kindBase], cols[kindBody], append(general, g.Quit)}
	if h.m.cfg.ReadOnly {
		all = all[1:]
		for i := range all {
			all[i] = h.m.offered(all[i])
		}
	}
	return all
}

// viewStack is the views open, the base first. It is never empty.
type viewStack []viewID

// base is the view the charts are drawn in.
func (s viewStack) base() viewID { return s[0] }

// top is the view opened last: the one esc closes.
func (s viewStack) top() viewID { return s[len(s)-1] }

// body is the view whose lines fill the screen between the title line
// and the footer: the topmost one but the help.
func (s viewStack) body() viewID {
	for i := len(s) - 1; i > 0; i-- {
		if s[i] != viewHelp {
			return s[i]
		}
	}
	return s[0]
}

// covered reports whether the base is hidden behind another view: its
// charts then wait, and closing that view draws them.
func (s viewStack) covered() bool { return s.body() != s.base() }

// has reports whether v is open.
func (s viewStack) has(v viewID) bool { return slices.Contains(s, v) }

// without returns the stack without v (never without its base).
func (s viewStack) without(v viewID) viewStack {
	return append(s[:1:1], slices.DeleteFunc(slices.Clone(s[1:]), func(o viewID) bool { return o == v })...)
}

// toggle closes v if it is open, else opens it on top. A view in the
// base's place replaces the one there.
func (s viewStack) toggle(v viewID) viewStack {
	if s.has(v) {
		return s.without(v)
	}
	if views[v].kind == kindBody {
		if b := s.body(); b != s.base() {
			s = s.without(b)
		}
	}
	return append(slices.Clone(s), v)
}

// withBase returns the stack on another base, the views over it kept.
func (s viewStack) withBase(b viewID) viewStack {
	out := slices.Clone(s)
	out[0] = b
	return out
}
