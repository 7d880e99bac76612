package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/roll"
)

// The fleet view's component and the model's side of it: when it opens,
// the keys of its rows and those that move between them and a node's
// pane, and the rolling save's commands.

// fleetKeys are the keys of the fleet view's rows.
type fleetKeys struct {
	SelUp   key.Binding // select the row above
	SelDown key.Binding
	Select  key.Binding // help only: up and down in one entry
	Open    key.Binding // the selected node's full pane, or two marked side by side
	Mark    key.Binding // marks a node for enter to compare
	Sort    key.Binding // cycles the rows' order
	Filter  key.Binding // / types a filter of the rows
}

func newFleetKeys() fleetKeys {
	return fleetKeys{
		SelUp:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select up")),
		SelDown: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "select down")),
		Select:  key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "select")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		// space is replay's play/pause: m marks there.
		Mark:   key.NewBinding(key.WithKeys(" ", "m"), key.WithHelp("space/m", "mark")),
		Sort:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort")),
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	}
}

// newFleetComponent returns the fleet view of a fleet's model, and no
// view otherwise.
func newFleetComponent(o viewOpts) component {
	if o.fleet == nil {
		return nil
	}
	return o.fleet
}

// Toggle implements component: the rows are a base (esc from a node's
// pane comes back to them).
func (f *fleetView) Toggle() *key.Binding { return nil }

// SyncKeys implements component: the rows' keys work while they fill
// the body.
func (f *fleetView) SyncKeys(o openState) {
	on := o.fills
	k := &f.keys
	for _, b := range []*key.Binding{&k.SelUp, &k.SelDown, &k.Select, &k.Open, &k.Mark, &k.Sort, &k.Filter} {
		b.SetEnabled(on)
	}
}

// ShortHelp implements component.
func (f *fleetView) ShortHelp(h helpKeys) []key.Binding {
	g, k := h.g, &f.keys
	return []key.Binding{k.Select, k.Open, g.SaveAll, h.toggles[viewHelp], g.Quit, g.Save, k.Filter, k.Mark, k.Sort,
		h.toggles[viewCost], h.toggles[viewTable], g.Pause, g.Scale, g.Rewrite, g.Cancel}
}

// FullHelp implements component.
func (f *fleetView) FullHelp() []key.Binding {
	k := &f.keys
	return []key.Binding{k.SelUp, k.SelDown, k.Open, k.Mark, k.Sort, k.Filter}
}

// View implements component.
func (f *fleetView) View(c *viewCtx) []string { return f.view(c.st, c.prog, c.store, c.perPane) }

// isFleet reports whether cfg opens the fleet view: a cluster, whatever
// its size, or three or more servers.
func isFleet(cfg Config) bool {
	if t := cfg.Topology; t != nil && (t.Cluster || len(t.Nodes()) >= 3) {
		return true
	}
	return len(cfg.Nodes) >= 3
}

// startFleet opens the fleet view on the configured topology (or the list
// of nodes). The rolling save checks each node's memory itself
// (source/risk); the view writes its warning (heldWarning).
func (m *Model) startFleet() {
	top := listTopology(m.cfg.Nodes)
	if m.cfg.Topology != nil {
		top = *m.cfg.Topology
	}
	m.fleet = newFleetView(top, roll.Config{MaxParallel: max(m.cfg.MaxParallelSaves, 1)}, m.store)
	m.stack = viewStack{viewFleet}
}

// paneFor returns the pane of a node, making it on first use: a fleet's
// panes are made when a node is opened, and draw its history from the
// store at once.
func (m *Model) paneFor(id source.NodeID, addr string) *pane {
	if p := m.byID[id]; p != nil {
		return p
	}
	p := newPane(len(m.panes), id, inert.Text(addr))
	m.panes = append(m.panes, p)
	m.byID[id] = p
	return p
}

// addrOf is how a node is named in the footer.
func (m *Model) addrOf(id source.NodeID) string {
	if p := m.byID[id]; p != nil {
		return p.addr
	}
	if m.fleet != nil {
		if r := m.fleet.row(id); r != nil {
			return r.addr()
		}
	}
	return inert.Text(string(id))
}

// showFleet goes back from a node's pane (or two) to the fleet view.
func (m *Model) showFleet() {
	m.shown, m.focus = nil, 0
	m.setStack(m.stack.withBase(viewFleet))
}

// openNodes opens nodes' panes in place of the fleet view, with a note
// for the footer.
type openNodes struct {
	ids  []source.NodeID
	note string
}

func (o openNodes) apply(m *Model) {
	if o.note != "" {
		noteFor(o.note).apply(m)
	}
	var shown []*pane
	for _, id := range o.ids {
		if r := m.fleet.row(id); r != nil {
			shown = append(shown, m.paneFor(id, r.addr()))
		}
	}
	if len(shown) == 0 {
		return
	}
	m.shown, m.focus = shown, 0
	m.setStack(m.stack.withBase(viewPanes))
}

// openSelected asks for the two marked nodes side by side, or else the
// selected node's full pane.
func (f *fleetView) openSelected() openNodes {
	ids := f.markedInOrder()
	if len(ids) == 2 {
		return openNodes{ids: ids}
	}
	o := openNodes{ids: []source.NodeID{f.sel}}
	if len(ids) > 2 {
		o.note = fmt.Sprintf("%d nodes marked: enter shows two side by side (space unmarks); showing the selected one", len(ids))
	}
	return o
}

// Update implements component: the keys of the fleet view's rows.
func (f *fleetView) Update(_ *viewCtx, k tea.KeyMsg) (bool, request) {
	switch {
	case key.Matches(k, f.keys.SelUp):
		f.move(-1)
	case key.Matches(k, f.keys.SelDown):
		f.move(1)
	case key.Matches(k, f.keys.Mark):
		f.toggleMark()
		if n := len(f.marked); n > 0 {
			hint := map[bool]string{true: "enter shows the two side by side", false: "mark two and enter shows them side by side"}[n == 2]
			return true, noteFor(fmt.Sprintf("%d marked: %s", n, hint))
		}
	case key.Matches(k, f.keys.Sort):
		f.nextSort()
	case key.Matches(k, f.keys.Filter):
		f.editing = true
	case key.Matches(k, f.keys.Open):
		return true, f.openSelected()
	default:
		return false, nil
	}
	return true, nil
}

// fleetKey handles B and A in a fleet. B plans the rolling save and
// shows it for confirmation; B again starts it; while the memory check
// holds it, B sends that node's save anyway. A rolling AOF rewrite is
// not offered: a rewrites the selected node.
func (m *Model) fleetKey(aof, confirmed bool) tea.Cmd {
	f := m.fleet
	note := func(kind footKind, text string) tea.Cmd {
		m.setFooter(footEntry{kind: kind, text: text})
		return nil
	}
	switch {
	case aof:
		return note(footNote, "A: a rolling AOF rewrite is not offered for a fleet; a rewrites the selected node, B saves the fleet node by node")
	case m.stack.body() != viewFleet:
		return note(footNote, "B: the rolling save starts from the fleet view (esc goes back to it)")
	case m.cfg.ReadOnly:
		return note(footErr, "read-only: rolling save not started ("+m.readOnlyWhy+")")
	case m.cfg.Send == nil:
		return note(footErr, "cannot start a rolling save: no command channel")
	case f.roll() != nil && f.roll().State() == roll.Held:
		return m.rollCmds(f.roll().Confirm())
	case f.rollActive():
		return note(footNote, "a rolling save is running: esc cancels the nodes not started")
	case confirmed && f.planned():
		return m.rollCmds(f.start())
	}
	if len(f.plan()) == 0 {
		f.drive.Drop()
		return note(footErr, "rolling save: no node to save")
	}
	m.confirm = pending{key: m.keys.SaveAll, what: "start the rolling save", other: "cancel"}
	return nil
}

// heldWarning is the warning of the node whose memory check holds the
// rolling save, empty when none does.
func (f *fleetView) heldWarning() string {
	if f.roll() == nil {
		return ""
	}
	if h := f.roll().Progress().Held; h != nil {
		return ForkWarning(h.Node.Addr, h.Risk)
	}
	return ""
}

// escape is esc in the fleet view: it cancels the rolling save's nodes
// not started yet (the saves running finish), or clears the line of one
// that has ended.
func (f *fleetView) escape() {
	switch {
	case f.filter != "":
		f.filter, f.shown = "", nil
	case f.rollActive():
		f.roll().Cancel()
	case f.roll() != nil && f.roll().State().Over():
		f.drive.Drop()
	}
}

// rollCmds turns the rolling save's actions into commands: each a tea.Cmd
// calling Config.Send, run concurrently by bubbletea; their answers come
// back as events, which the roll follows.
func (m *Model) rollCmds(acts []roll.Action) tea.Cmd {
	return tea.Batch(m.sendCmds(acts), m.expectCmd())
}

// expectCmd tells the fleet the roll's next node when it changed (none
// once the roll is over or cancelled), so that its fork pause falls
// between PINGs 2 ms apart, as in the headless roll (fleet.Drive).
func (m *Model) expectCmd() tea.Cmd {
	f, expect := m.fleet, m.cfg.Expect
	if f == nil || expect == nil {
		return nil
	}
	var next []source.NodeID
	if r := f.roll(); r != nil {
		next = r.Next()
	}
	if slices.Equal(next, f.expected) {
		return nil
	}
	f.expected = next
	return func() tea.Msg {
		if len(next) == 0 {
			expect("")
		} else {
			expect(roll.ExpectNext, next...)
		}
		return nil
	}
}

// sendCmds turns the roll's actions into a tea.Cmd each.
func (m *Model) sendCmds(acts []roll.Action) tea.Cmd {
	send := m.cfg.Send
	if len(acts) == 0 || send == nil || m.cfg.ReadOnly {
		return nil
	}
	cmds := make([]tea.Cmd, 0, len(acts))
	for _, a := range acts {
		m.setFooter(footEntry{node: a.Node, kind: footNote,
			text: fmt.Sprintf("rolling save: sending %s to %s…", strings.Join(a.Args, " "), m.addrOf(a.Node))})
		cmds = append(cmds, func() tea.Msg {
			send(a.Node, a.Args...)
			return nil
		})
	}
	m.compose()
	return tea.Batch(cmds...)
}

// carry takes over the old model's selection, order and marks.
func (f *fleetView) carry(from component) {
	old := from.(*fleetView)
	f.sel, f.sort, f.scroll = old.sel, old.sort, old.scroll
	for id := range old.marked {
		f.marked[id] = true
	}
}
