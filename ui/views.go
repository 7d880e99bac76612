package ui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/style"
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
// body, FullHelp its share of the full help's columns). A view never sees
// the model: it draws from a viewCtx (its styles, the store, the panes
// and nodes it shows, the scales, what the user pressed), its keys are
// its own bindings, and what it wants of the model it asks for (request),
// so that each can be made and tested alone.
type component interface {
	// SetSize gives the view the body: the terminal's width and the lines
	// between the title line and the footer (for the help: its lines).
	SetSize(w, h int)
	// Update handles a key; it reports whether the key was the view's,
	// and what it asks of the model (nil: nothing). The view that fills
	// the body is asked first, then the base.
	Update(c *viewCtx, k tea.KeyMsg) (bool, request)
	// View returns the view's lines.
	View(c *viewCtx) []string
	// Toggle is the key that opens and closes the view; nil for a base.
	Toggle() *key.Binding
	// SyncKeys enables the view's keys for the views open: a view's keys
	// work only while it is on screen.
	SyncKeys(o openState)
	// ShortHelp is the help line while the view fills the body: its keys
	// and others', in the order they are cut from the end.
	ShortHelp(h helpKeys) []key.Binding
	// FullHelp is the view's share of the full help: its keys, listed in
	// the column of its kind.
	FullHelp() []key.Binding
}

// viewCtx is what the views draw from, made by the model for each frame,
// as gh-dash's ProgramContext: nothing in it reaches back into the model.
type viewCtx struct {
	st    *style.Styles
	prog  progress.Model
	store *store.Store
	// panes are the panes on screen, laid out by mode; focus indexes them.
	panes []*pane
	mode  layoutMode
	focus int
	// nodes are the servers the body speaks of: every node of a fleet,
	// else the panes shown (the cost view's curves).
	nodes []source.NodeID
	// perPane says each pane (or fleet row) has its own scales (s).
	perPane bool
	// help is the keys of what is open, and full whether the full help
	// is; prompt is a key the user must press again, or a held roll.
	help   keyHelp
	full   bool
	prompt prompt
}

// prompt is what the help line asks of the user instead of listing keys:
// a key whose command waits to be pressed again, or a rolling save held
// by its memory check.
type prompt struct {
	key   string // the key to press again; "" when none waits
	what  string // what pressing it again does
	other string // what any other key does
	held  string // the memory check's warning that holds a rolling save
}

// openState is what SyncKeys is told of the views open.
type openState struct {
	fills   bool // the view fills the body: its keys work
	base    bool // the view is the base the charts are drawn in
	covered bool // another view covers the base
	help    bool // the full help is open
	shown   int  // the panes shown
}

// helpKeys are the bindings a view's help line shows beside its own: the
// model's, the views' toggles by viewID (a zero Binding, never shown, for
// a view the model has not) and the panes' focus key.
type helpKeys struct {
	g       *keyMap
	toggles []key.Binding
	next    key.Binding
}

// keyHelp is the help of what is open, as bubbles/help draws it: the
// short line and the full help's columns.
type keyHelp struct {
	short []key.Binding
	full  [][]key.Binding
}

// ShortHelp implements help.KeyMap.
func (k keyHelp) ShortHelp() []key.Binding { return k.short }

// FullHelp implements help.KeyMap.
func (k keyHelp) FullHelp() [][]key.Binding { return k.full }

// request is what a view asks of the model after a key: the model's own
// state (the focus, the panes shown, the footer) changes only in the
// model.
type request interface{ apply(m *Model) }

// focusTo moves the focus to pane n.
type focusTo int

func (n focusTo) apply(m *Model) { m.focus = int(n) }

// noteFor puts a note in the footer.
type noteFor string

func (n noteFor) apply(m *Model) { m.setFooter(footEntry{kind: footNote, text: string(n)}) }

// viewOpts is what the views are made for: how many servers, and a
// fleet's view of its rows (nil outside a fleet).
type viewOpts struct {
	servers int
	fleet   *fleetView
}

// views is every view the model can show, by id, in the order the full
// help lists their keys. make returns nil for a view this model has not
// (the fleet's rows outside a fleet). A new view is a file with its
// component and one line here.
var views = [...]struct {
	kind viewKind
	make func(o viewOpts) component
}{
	viewFleet: {kindBase, newFleetComponent},
	viewPanes: {kindBase, newPanesView},
	viewCost:  {kindBody, newCostView},
	viewTable: {kindBody, newReportTable},
	viewHelp:  {kindFoot, newHelpView},
}

// makeViews makes the model's views.
func (m *Model) makeViews() {
	o := viewOpts{servers: len(m.cfg.Nodes), fleet: m.fleet}
	m.views = make([]component, len(views))
	for id, v := range views {
		m.views[id] = v.make(o)
	}
}

// ctx is what the views draw from now.
func (m *Model) ctx() *viewCtx {
	c := &viewCtx{st: m.st, prog: m.prog, store: m.store, panes: m.shown, mode: m.lay.mode, focus: m.focus,
		perPane: m.perPane, full: m.lay.fullHelp, prompt: m.prompt()}
	if m.fleet != nil {
		c.nodes = make([]source.NodeID, len(m.fleet.rows))
		for i, r := range m.fleet.rows {
			c.nodes[i] = r.id
		}
	} else {
		c.nodes = make([]source.NodeID, len(m.shown))
		for i, p := range m.shown {
			c.nodes[i] = p.id
		}
	}
	c.help = m.keyHelp(c.full)
	return c
}

// prompt is what the help line asks of the user now, if anything.
func (m *Model) prompt() prompt {
	p := prompt{}
	if c := m.confirm; c.key.Enabled() {
		p.key, p.what, p.other = c.key.Help().Key, c.what, c.other
	}
	if m.fleet != nil && m.fleet.roll() != nil && m.fleet.roll().State() == roll.Held {
		p.held = m.fleet.heldWarning()
	}
	return p
}

// viewKey hands a key to the views: the one that fills the body, then
// the base (tab still moves focus under the table), then the views'
// toggles. It reports whether one took it.
func (m *Model) viewKey(k tea.KeyMsg) bool {
	body, base := m.stack.body(), m.stack.base()
	c := m.ctx()
	took, req := m.views[body].Update(c, k)
	if !took && body != base {
		took, req = m.views[base].Update(c, k)
	}
	if took {
		if req != nil {
			req.apply(m)
		}
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

// toggleOf is v's toggle, nil for none (or no view).
func toggleOf(v component) *key.Binding {
	if v == nil {
		return nil
	}
	return v.Toggle()
}

// helpKeys are the bindings the views' help lines take from the model.
func (m *Model) helpKeys() helpKeys {
	h := helpKeys{g: &m.keys, toggles: make([]key.Binding, len(m.views)),
		next: m.views[viewPanes].(*panesView).Next}
	for id, v := range m.views {
		if t := toggleOf(v); t != nil {
			h.toggles[id] = *t
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
			v.SyncKeys(openState{fills: viewID(id) == body, base: viewID(id) == m.stack.base(),
				covered: m.stack.covered(), help: m.stack.has(viewHelp), shown: len(m.shown)})
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

// keyHelp is the help of what is open: the short line of the view that
// fills the body; with full, the full help's columns: the model's
// commands, the bases' keys, the keys of the views in their place, and
// the model's general keys with the help's own.
func (m *Model) keyHelp(full bool) keyHelp {
	hk := m.helpKeys()
	out := keyHelp{short: m.offered(m.views[m.stack.body()].ShortHelp(hk))}
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
	out.full = [][]key.Binding{g.commands(), cols[kindBase], cols[kindBody], append(general, g.Quit, g.Interrupt)}
	if m.cfg.ReadOnly {
		out.full = out.full[1:]
	}
	for i := range out.full {
		out.full[i] = m.offered(out.full[i])
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
