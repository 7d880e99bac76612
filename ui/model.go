// Package ui is vkwatch's terminal interface: a bubbletea model that folds
// source.Event values into a history store (source/store) and routes what
// the user sees to its views: one pane per server, a fleet's rows, or the
// reports table (r) or the save cost curves (c) in their place, and the
// help.
//
// The root (this package) keeps the store, the footer, the title line, the
// commands sent to servers and which views are open (stack.go: one stack,
// the base at its bottom). Each view is a package with its model, keys,
// view, tests and goldens, speaking to the root through view.Component
// (ui/view) and messages: ui/panesview (the panes: their layout, focus and
// boxes), ui/fleetview (a fleet's rows and its rolling save), ui/costview,
// ui/tableview, ui/helpview, and ui/replay around the whole model. What
// they share they import, never the root: ui/status (a pane's status
// blocks, as fields), ui/plot (the chart table, scales, chart columns),
// ui/chart (charts as rows of runes), ui/words (a save's facts in words),
// ui/text (figures as text), ui/style.
//
// To add a view: a package with a type implementing view.Component (copy
// ui/costview), one line in stack.go's views table and a view.Name; it
// gets its key, esc, the help and the charts waiting behind it for free.
// To add a pane field: one Field in its block's list in ui/status
// (status.go, next.go) with its Prio; to add a chart: one entry in
// ui/plot's Charts.
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
	"fmt"
	"slices"
	"strings"
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
	"github.com/vkwatch/vkwatch/ui/helpview"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/words"
)

// Defaults for Config fields left zero.
const (
	defaultHistory  = 2 * time.Minute
	defaultInterval = 200 * time.Millisecond
)

// Node is one server the UI shows.
type Node struct {
	ID   source.NodeID // what its events carry
	Addr string        // display address, never with a password
}

// inertNodes returns ns with every address made inert (source/inert), in
// a new slice: the caller's is left as it was. Ids are keys, kept as
// given. A string field added to Node needs its line here;
// TestInertNodesReachEveryString fails until it has one.
func inertNodes(ns []Node) []Node {
	out := make([]Node, len(ns))
	for i, n := range ns {
		n.Addr = inert.Text(n.Addr)
		out[i] = n
	}
	return out
}

// Config is everything the UI needs from its caller.
type Config struct {
	// Nodes are the servers, one pane each, in order. Events for a node not
	// listed are ignored, unless the UI is a fleet's (below): then every
	// node of its topology has a row, those that join later included.
	Nodes []Node
	// Topology is the fleet the nodes are, as it stood at the start (the
	// rows' shards and roles, what told them, the PING interval per node);
	// later ones come as EventTopology. A cluster's, or three or more
	// nodes, open the fleet view; nil is the list of Nodes.
	Topology *source.Topology
	// History is how much time the charts keep (default 2m).
	History time.Duration
	// Interval is the sampling interval (default 200ms); with History it
	// sizes the chart buffers.
	Interval time.Duration
	// IdleInterval is how often a server at rest is sampled, when less
	// often than Interval (source/fleet's IdleInterval): a line breaks
	// only at a hole longer than three of these.
	IdleInterval time.Duration
	// Send sends a command to a server. It is called only inside a tea.Cmd
	// and may block; its answer arrives later as an EventCommand.
	Send func(node source.NodeID, args ...string)
	// Expect names the nodes a rolling save starts next, to be probed
	// finely before they fork (source/fleet's Fleet.Expect; none
	// withdraws them). Called only inside a tea.Cmd; nil: not told.
	Expect func(why string, nodes ...source.NodeID)
	// ReadOnly refuses b/a/B/A with a footer note and never calls Send.
	ReadOnly bool
	// ReadOnlyWhy ends that note ("--read-only" when empty): a replay
	// says a recording takes no commands.
	ReadOnlyWhy string
	// Banner is an optional one-line header above the panes, and Hint
	// what to press, after it (the demo's "press B to save both"): where
	// the title line is short of room, the banner is cut, never the hint.
	Banner, Hint string
	// MaxParallelSaves is --max-parallel-saves, for the fleet view's
	// rolling save (source/roll.Config.MaxParallel); 0 means 1.
	MaxParallelSaves int
	// Now is an optional clock, for tests; time.Now when nil. The UI reads
	// it only to stamp the moment the view was paused and to name S's
	// picture.
	Now func() time.Time
	// ShotDir is where S writes the screen as SVG; "" is the current
	// directory.
	ShotDir string
	// ASCII draws the screen in ASCII only (ascii.go): charts, bars,
	// borders and marks, for terminals and fonts without braille or
	// UTF-8.
	ASCII bool
}

// EventMsg carries one event into the model.
type EventMsg source.Event

// EventsMsg carries a batch of events; the wiring coalesces events so the UI
// redraws once per batch rather than once per event.
type EventsMsg []source.Event

// footKind tells how a footer entry reads.
type footKind int

const (
	footNote footKind = iota // a note, e.g. "sending BGSAVE to …"
	footOK                   // a command's success answer
	footErr                  // a refusal or an error, shown verbatim
)

// footEntry is one part of the footer line. node is the server it speaks
// for, "" for a note about no server in particular.
type footEntry struct {
	node source.NodeID
	kind footKind
	text string
	// at is when it was said, by the events' clock (Model.clock), and
	// wall the time the footer shows for it: news has a time and an age.
	at   time.Duration
	wall time.Time
	// saveStart is a save's start: it stays while the save runs.
	saveStart bool
}

// footAge is how long a footer entry stays: a save's start while its
// save runs, any other this long by the events' clock (a pending
// confirmation keeps them all: it is the question the screen asks).
const footAge = 10 * time.Second

// pending is a command held back until its key is pressed again: what
// that does, and what any other key does instead.
type pending struct {
	key         key.Binding // a zero Binding: nothing pending
	what, other string
}

// layout is how the terminal is shared: the body (laid out by the view
// in it: the panes share it as panesview.Fit says), the help's lines.
type layout struct {
	tooSmall bool // not even one pane (or a fleet's row) fits
	fullHelp bool // full help shown (it may not fit even when asked for)
	helpH    int  // lines the help takes
}

// Model is the vkwatch UI. It implements tea.Model.
//
// A Model holds its panes by pointer, like ntcharts' sparkline holds its
// buffer: copies of a Model share pane state, which is what bubbletea's
// value-passing Update wants and keeps Update from copying chart buffers.
type Model struct {
	cfg   Config
	st    *style.Styles
	keys  keyMap // the model's own keys; each view has its own
	prog  progress.Model
	store *store.Store // every node's history: what panes and views draw
	// panes is the panes view (ui/panesview): every pane made so far,
	// those on screen and the focus among them.
	panes *panesview.Model
	fleet *fleetview.Model // nil unless a fleet
	// views are the views, by viewID (stack.go), shared by copies like
	// the panes; stack is which are open: the base, panes or the fleet's
	// rows, and what was opened over it.
	views []view.Component
	stack viewStack

	width, height int
	paused        bool
	pausedAt      time.Time
	footer        []footEntry
	lay           layout
	// perPane draws each pane's charts on its own scales (s); by default
	// a metric has one scale across panes, so idle and loaded compare.
	perPane bool

	// confirm is the key (b, B, a, A) whose fork was held back by a
	// memory warning, x for a save cancel waiting to be confirmed, or B
	// for a rolling save planned: pressing it again as the very next key
	// sends it.
	confirm pending
	// readOnlyWhy ends the note refusing a command in a read-only model.
	readOnlyWhy string

	status string // set by a replay (StatusMsg): the playback position, in the title line

	// clock is the latest event's offset: the footer's entries age by it
	// (Update reads no clock of its own).
	clock time.Duration

	view string // the frame View returns, rebuilt by Update
}

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

// stuckPrefix starts the footer line of a stuck save.
const stuckPrefix = "⚠ stuck? "

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
		e.text = fmt.Sprintf("%s on %s: %s", c.Command, addr, c.Reply)
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

// bodyHeight is the lines between the title line and the footer.
func (m *Model) bodyHeight() int { return m.height - 2 - m.lay.helpH }

// helpView is the help's component: the model sizes it and writes it
// at the bottom of every frame.
func (m *Model) helpView() *helpview.Model { return m.views[viewHelp].(*helpview.Model) }

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
