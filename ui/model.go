// Package ui is vkwatch's terminal interface: a bubbletea model that folds
// source.Event values into a history store (source/store) and routes what
// the user sees to its views: one pane per server, a fleet's rows, or the
// reports table (r) or the save cost curves (c) in their place, and the
// help.
//
// The root (this package) keeps the store, the footer, the title line, the
// commands sent to servers and which views are open (stack.go: one stack,
// the base at its bottom). Its files stand in order, each using only those
// below it (state.go lists them), model.go, the router, on top. Each view
// is a package with its model, keys, view, tests and goldens, speaking to
// the root through view.Component (ui/view) and messages: ui/panesview
// (the panes: their layout, focus and boxes), ui/fleetview (a fleet's rows
// and its rolling save), ui/costview, ui/tableview, ui/helpview, and
// ui/replay around the whole model. What they share they import, never
// the root: ui/status (a pane's status blocks, as fields), ui/plot (the
// chart table, scales, chart columns), ui/chart (charts as rows of runes),
// ui/words (a save's facts in words), ui/text (figures as text), ui/style.
//
// To add a view: a package ui/<what>view whose model implements
// view.Component (ui/costview is the smallest), and one line in stack.go's
// views table; its key, esc, the help and the charts waiting behind it
// come with that. To add a pane field: one status.Field, with its Prio,
// in its block's list in ui/status (status.go, next.go). To add a chart:
// one entry in ui/plot's Charts. deps_test.go keeps the rooms in order.
//
// It never opens a connection. Commands the user asks for (BGSAVE,
// BGREWRITEAOF) leave through Config.Send, called only inside a tea.Cmd, and
// their answers come back later as source.EventCommand events.
//
// Drawing happens in Update, when events arrive or the layout changes; View
// only returns the cached frame, so a fast event stream never makes the
// terminal lag behind.
package ui

import (
	"cmp"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/fleetview"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/view"
)

// New builds a model for cfg, filling defaults. It draws for an 80x24
// terminal until the first tea.WindowSizeMsg arrives.
func New(cfg Config) Model {
	if cfg.History <= 0 {
		cfg.History = defaultHistory
	}
	if cfg.Interval <= 0 {
		cfg.Interval = defaultInterval
	}
	cfg.IdleInterval = max(cfg.IdleInterval, cfg.Interval)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	// Addresses come from flags or a recording, the topology from a
	// cluster: all made inert once, here (source/inert).
	cfg.Banner, cfg.Hint = inert.Text(cfg.Banner), inert.Text(cfg.Hint)
	cfg.Nodes = inertNodes(cfg.Nodes)
	if cfg.Topology != nil {
		t := cfg.Topology.Inert()
		cfg.Topology = &t
	}
	st := plot.Styles(cfg.ASCII)
	m := Model{
		cfg:  cfg,
		st:   &st,
		keys: newKeyMap(len(cfg.Nodes), isFleet(cfg)),
		// The bar is drawn with ViewAs only: no animation frames to schedule.
		// Its colour profile follows lipgloss's, so NO_COLOR and tests agree.
		prog: progress.New(progress.WithDefaultGradient(), progress.WithoutPercentage(),
			progress.WithColorProfile(lipgloss.ColorProfile())),
		width:       80,
		height:      24,
		readOnlyWhy: cmp.Or(cfg.ReadOnlyWhy, "--read-only"),
		stack:       viewStack{viewPanes},
		panes:       panesview.New(len(cfg.Nodes), isFleet(cfg)),
	}
	m.store = store.New(store.Config{Keep: cfg.History, Columns: plot.StoreColumns()})
	for _, n := range cfg.Nodes {
		m.panes.Add(n.ID, n.Addr)
	}
	if isFleet(cfg) {
		m.startFleet()
	} else {
		m.panes.ShowAll()
	}
	m.makeViews()
	m.syncKeys()
	m.relayout()
	m.refresh()
	return m
}

// Init implements tea.Model; the model needs no start-up command.
func (m Model) Init() tea.Cmd { return nil }

// Update implements tea.Model. It does no I/O: commands for servers leave as
// a tea.Cmd calling Config.Send.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.relayout()
		m.refresh()
	case EventMsg:
		acts := m.fold(source.Event(msg))
		m.refresh()
		return m, m.rollCmds(acts)
	case EventsMsg:
		var acts []roll.Action
		for _, ev := range msg {
			acts = append(acts, m.fold(ev)...)
		}
		m.refresh()
		return m, m.rollCmds(acts)
	case shotMsg:
		m.setFooter(shotNote(msg))
		m.compose()
	case StatusMsg:
		m.setStatus(string(msg))
	case ResetMsg:
		m.resetHistory(time.Duration(msg))
	case tea.KeyMsg:
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
			return m.onRunes(msg.Runes)
		}
		return m.onKey(msg)
	}
	return m, nil
}

// Keep is how far back the model keeps history now: a replay reads that
// much of a recording before the time it seeks to.
func (m Model) Keep() time.Duration { return m.keepFor() }

// resetHistory empties the history from from on (ResetMsg).
func (m *Model) resetHistory(from time.Duration) {
	m.store.Reset(from)
	m.footer, m.clock = nil, 0
	m.refresh()
}

// onRunes handles keys typed faster than the terminal was read (bubbletea
// delivers them as one message, "jjj"): each is a key of its own, in order.
func (m Model) onRunes(runes []rune) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	for _, r := range runes {
		nm, cmd := m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
		m = nm.(Model)
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// View implements tea.Model. It returns the frame Update drew.
func (m Model) View() string { return m.view }

// Reports returns every save report seen so far, oldest first.
func (m Model) Reports() []source.SaveReport {
	return append([]source.SaveReport(nil), m.store.Reports()...)
}

// fold applies one event to the state: a command's answer to the footer,
// anything else to the store; in a fleet, every event to the fleet view
// too (its topology and rolling save, which read the nodes' state from the
// store: it comes first), which returns the commands its rolling save
// wants sent. Nothing is drawn here.
func (m *Model) fold(ev source.Event) []roll.Action {
	// Every string a server or a recording said is made inert here, once
	// per event, before any part of the UI keeps or draws it (node ids
	// stay keys; they are shown through inert.Text).
	ev = ev.Inert()
	if m.fleet == nil && !m.panes.Has(ev.Node) {
		return nil // an event for a server this UI was not told about
	}
	m.clock = max(m.clock, ev.Offset)
	switch ev.Kind {
	case source.EventTopology: // about the fleet, not about a node
	case source.EventCommand:
		if ev.Command != nil {
			m.answer(ev.Node, ev.Command, ev.At)
		}
	default:
		m.store.Add(ev)
		if ev.Kind == source.EventSample || ev.Kind == source.EventSaveEnded {
			m.stuckFooter(ev.Node)
		}
		if ev.Kind == source.EventSaveEnded {
			m.endFooter(ev.Node, ev.Report, ev.At)
		}
	}
	m.ageFooter()
	if m.fleet == nil {
		return nil
	}
	return m.fleet.Observe(ev)
}

// onKey handles a key press. Every key first clears the footer: an answer
// stays until the user does something else.
//
// A key held back by a memory warning (confirm) is sent if it comes again
// now; any other key drops it and does what it always does.
func (m Model) onKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	if key.Matches(k, m.keys.Interrupt) {
		// Before everything, a filter being typed included: ctrl+c ends
		// the program whatever the screen shows (exit status 130).
		return m, tea.Interrupt
	}
	frame := m.view // the screen as the user sees it, for S
	m.footer = nil
	confirmed := key.Matches(k, m.confirm.key)
	m.confirm = pending{}
	if m.fleet != nil && !confirmed {
		m.fleet.DropPlan() // any other key cancels a rolling save not started
	}
	if m.fleet != nil && m.fleet.Editing() && m.stack.body() == viewFleet {
		// Typing a filter: every key is text, q and b included.
		m.fleet.EditFilter(k)
		m.refresh()
		return m, nil
	}
	switch {
	case key.Matches(k, m.keys.Quit):
		return m, tea.Quit
	case key.Matches(k, m.keys.Shot):
		return m, m.afterKey(shotCmd(frame, m.width, m.height, m.cfg.ShotDir, m.cfg.Now))
	case m.fleet != nil && key.Matches(k, m.keys.SaveAll, m.keys.RewriteAll):
		return m, m.afterKey(m.fleetKey(key.Matches(k, m.keys.RewriteAll), confirmed))
	case key.Matches(k, m.keys.Save):
		return m, m.afterKey(m.fork(false, confirmed, "BGSAVE"))
	case key.Matches(k, m.keys.Rewrite):
		return m, m.afterKey(m.fork(false, confirmed, "BGREWRITEAOF"))
	case key.Matches(k, m.keys.SaveAll):
		return m, m.afterKey(m.fork(true, confirmed, "BGSAVE"))
	case key.Matches(k, m.keys.RewriteAll):
		return m, m.afterKey(m.fork(true, confirmed, "BGREWRITEAOF"))
	case key.Matches(k, m.keys.Cancel):
		return m, m.afterKey(m.cancelSave(confirmed))
	case key.Matches(k, m.keys.Method):
		return m, m.afterKey(m.switchMethod(confirmed))
	}
	m.onViewKey(k)
	return m, nil
}

// afterKey rebuilds the frame after a key and passes its command on.
func (m *Model) afterKey(cmd tea.Cmd) tea.Cmd {
	m.compose()
	return cmd
}

// viewKey handles the keys that change what is shown: esc closes the
// view opened last, the views take their own keys, and the scales and
// the pause are the model's.
func (m *Model) onViewKey(k tea.KeyMsg) {
	switch {
	case key.Matches(k, m.keys.Close):
		switch top := m.stack.top(); {
		case top != m.stack.base():
			m.setStack(m.stack.without(top))
		case m.fleet != nil && top == viewPanes:
			m.showFleet()
		case m.fleet != nil:
			m.fleet.Escape()
		}
	case m.viewKey(k):
	case key.Matches(k, m.keys.Scale):
		m.perPane = !m.perPane
	case key.Matches(k, m.keys.Pause):
		m.setPaused(!m.paused)
	}
	m.refresh()
}

// setPaused freezes the store's views (collection goes on) or thaws them.
func (m *Model) setPaused(paused bool) {
	m.paused = paused
	m.keys.Pause.SetHelp("p", map[bool]string{true: "resume", false: "pause"}[paused])
	if paused {
		m.pausedAt = m.cfg.Now()
		m.store.Freeze()
	} else {
		m.store.Thaw()
	}
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
