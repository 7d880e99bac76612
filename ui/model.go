// Package ui is vkwatch's terminal interface: a bubbletea model that folds
// source.Event values into per-server state and draws one pane per server.
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
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
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

// Config is everything the UI needs from its caller.
type Config struct {
	// Nodes are the servers, one pane each, in order. Events for a node not
	// listed are ignored.
	Nodes []Node
	// History is how much time the charts keep (default 2m).
	History time.Duration
	// Interval is the sampling interval (default 200ms); with History it
	// sizes the chart buffers.
	Interval time.Duration
	// Send sends a command to a server. It is called only inside a tea.Cmd
	// and may block; its answer arrives later as an EventCommand.
	Send func(node source.NodeID, args ...string)
	// ReadOnly refuses b/a/B/A with a footer note and never calls Send.
	ReadOnly bool
	// Banner is an optional one-line header above the panes.
	Banner string
	// MaxParallelSaves is --max-parallel-saves, for the fleet view's
	// rolling save (source/fleet.RollConfig.MaxParallel); 0 means 1.
	MaxParallelSaves int
	// Now is an optional clock, for tests; time.Now when nil. The UI reads
	// it only to stamp the moment the view was paused.
	Now func() time.Time
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
}

// layoutMode says how the panes share the terminal.
type layoutMode int

const (
	layoutSide     layoutMode = iota // panes side by side
	layoutStacked                    // panes one above the other
	layoutSingle                     // only the focused pane (two do not fit)
	layoutTooSmall                   // not even one pane fits
)

// layout is the geometry computed from the terminal size.
type layout struct {
	mode     layoutMode
	rows     int   // sparkline rows per chart
	widths   []int // pane widths, by pane index
	fullHelp bool  // full help shown (it may not fit even when asked for)
	helpH    int   // lines the help takes
}

// Model is the vkwatch UI. It implements tea.Model.
//
// A Model holds its panes by pointer, like ntcharts' sparkline holds its
// buffer: copies of a Model share pane state, which is what bubbletea's
// value-passing Update wants and keeps Update from copying chart buffers.
type Model struct {
	cfg   Config
	st    *styles
	keys  keyMap
	help  help.Model
	prog  progress.Model
	panes []*pane
	byID  map[source.NodeID]*pane

	focus         int
	width, height int
	paused        bool
	pausedAt      time.Time
	now           time.Duration // latest event offset: the charts' right edge
	footer        []footEntry
	reports       []source.SaveReport
	lay           layout

	// shownReports is how many of reports the table shows: all of them,
	// except while paused, when the table stays as it was.
	shownReports int
	table        reportTable
	// helpOverTable says the full help was opened while the table was
	// open, so esc closes the help first.
	helpOverTable bool
	// confirm is the key ("b" or "B") whose fork save was held back by a
	// memory warning: pressing it again as the very next key sends anyway.
	confirm string
	// readOnlyWhy ends the note refusing a command in a read-only model.
	readOnlyWhy string

	status   string // set by Replay: the playback position, in the title line
	helpText string // cached help view, for helpFor
	helpFor  helpKey

	view string // the frame View returns, rebuilt by Update
}

// helpKey is what a cached help view was drawn for.
type helpKey struct {
	width               int
	full, paused, table bool
	confirm             string
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	st := newStyles()
	m := Model{
		cfg:  cfg,
		st:   &st,
		keys: newKeyMap(len(cfg.Nodes)),
		help: help.New(),
		// The bar is drawn with ViewAs only: no animation frames to schedule.
		// Its colour profile follows lipgloss's, so NO_COLOR and tests agree.
		prog: progress.New(progress.WithDefaultGradient(), progress.WithoutPercentage(),
			progress.WithColorProfile(lipgloss.ColorProfile())),
		width:       80,
		height:      24,
		readOnlyWhy: "--read-only",
	}
	m.byID = make(map[source.NodeID]*pane, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		p := newPane(i, n.ID, n.Addr, cfg.History, cfg.Interval)
		m.panes = append(m.panes, p)
		m.byID[n.ID] = p
	}
	m.relayout()
	m.refresh(true)
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
		m.refresh(true)
	case EventMsg:
		m.fold(source.Event(msg))
		m.refresh(false)
	case EventsMsg:
		for _, ev := range msg {
			m.fold(ev)
		}
		m.refresh(false)
	case tea.KeyMsg:
		return m.onKey(msg)
	}
	return m, nil
}

// View implements tea.Model. It returns the frame Update drew.
func (m Model) View() string { return m.view }

// Reports returns every save report seen so far, oldest first.
func (m Model) Reports() []source.SaveReport {
	return append([]source.SaveReport(nil), m.reports...)
}

// fold applies one event to the state. Nothing is drawn here.
func (m *Model) fold(ev source.Event) {
	if ev.Offset > m.now {
		m.now = ev.Offset
	}
	p := m.byID[ev.Node]
	if p == nil {
		return // an event for a server this UI was not told about
	}
	switch ev.Kind {
	case source.EventCommand:
		if ev.Command != nil {
			m.answer(p, ev.Command)
		}
		return
	case source.EventSaveEnded:
		if ev.Report != nil {
			m.reports = append(m.reports, *ev.Report)
		}
	}
	p.fold(ev)
	p.changed = true
}

// answer puts a command's answer in the footer, in place of the note or
// answer it had for that server.
func (m *Model) answer(p *pane, c *source.CommandResult) {
	e := footEntry{node: p.id, kind: footOK}
	if c.OK() {
		e.text = fmt.Sprintf("%s on %s: %s", c.Command, p.addr, c.Reply)
	} else {
		e.kind = footErr
		e.text = fmt.Sprintf("✗ %s on %s: %s", c.Command, p.addr, c.Err)
	}
	m.setFooter(e)
}

// setFooter replaces the entry for e's server, or appends one.
func (m *Model) setFooter(e footEntry) {
	for i := range m.footer {
		if m.footer[i].node == e.node {
			m.footer[i] = e
			return
		}
	}
	m.footer = append(m.footer, e)
}

// keepFor is how far back points are kept: the window, or more when a wide
// terminal's columns at one sample each span longer.
func (m *Model) keepFor() time.Duration {
	keep := m.cfg.History
	if w := time.Duration(m.width) * m.cfg.Interval; w > keep {
		keep = w
	}
	return keep + m.cfg.Interval*4
}

// refresh brings the shown state up to date (unless paused), redraws what
// changed and rebuilds the frame. force redraws every chart (after a resize).
func (m *Model) refresh(force bool) {
	keep := m.keepFor()
	if !m.paused {
		m.shownReports = len(m.reports)
	}
	for _, p := range m.panes {
		p.prune(m.now, keep)
		if !m.paused {
			if p.changed {
				p.sync(m.now)
				p.changed = false
			} else {
				p.shown.now = m.now
			}
		}
		// Charts hidden behind the reports table wait: closing it
		// redraws them (setTable).
		if (force || !m.paused) && !m.table.open {
			p.redrawCharts(m.st, force)
		}
	}
	m.compose()
}

// relayout picks the layout for the terminal size and sizes the charts.
func (m *Model) relayout() {
	m.help.Width = m.width
	m.lay = m.pickLayout(m.help.ShowAll)
	if m.lay.mode == layoutTooSmall && m.help.ShowAll {
		// Full help is a courtesy: drop it before dropping the panes.
		m.lay = m.pickLayout(false)
	}
	for i, p := range m.panes {
		w := minPaneWidth
		if i < len(m.lay.widths) {
			w = m.lay.widths[i]
		}
		p.charts.resize(w-paneChrome-labelWidth, m.lay.rows)
	}
}

// pickLayout prefers panes side by side, then stacked, then the focused
// pane alone; within each, two-row sparklines before one-row ones.
func (m *Model) pickLayout(fullHelp bool) layout {
	n := len(m.panes)
	helpH := 1
	if fullHelp {
		helpH = lipgloss.Height(m.help.FullHelpView(m.keys.FullHelp()))
	}
	avail := m.height - 2 - helpH // title line, footer line, help
	lay := layout{fullHelp: fullHelp, helpH: helpH, widths: make([]int, n)}
	if n == 0 {
		lay.mode = layoutTooSmall
		return lay
	}
	type try struct {
		mode       layoutMode
		rows       int
		needW      int
		needH      int
		shareWidth bool
	}
	tries := []try{
		{layoutSide, 2, n * minPaneWidth, paneHeight(2), true},
		{layoutSide, 1, n * minPaneWidth, paneHeight(1), true},
		{layoutStacked, 2, minPaneWidth, n * paneHeight(2), false},
		{layoutStacked, 1, minPaneWidth, n * paneHeight(1), false},
		{layoutSingle, 2, minPaneWidth, paneHeight(2), false},
		{layoutSingle, 1, minPaneWidth, paneHeight(1), false},
	}
	for _, t := range tries {
		if m.width < t.needW || avail < t.needH {
			continue
		}
		lay.mode, lay.rows = t.mode, t.rows
		for i := range lay.widths {
			lay.widths[i] = m.width
			if t.shareWidth {
				lay.widths[i] = m.width / n
				if i == n-1 {
					lay.widths[i] = m.width - (n-1)*(m.width/n)
				}
			}
		}
		return lay
	}
	lay.mode, lay.rows = layoutTooSmall, 1
	for i := range lay.widths {
		lay.widths[i] = minPaneWidth
	}
	return lay
}

// minSize is the smallest terminal that shows one pane with short help.
func minSize() (int, int) { return minPaneWidth, paneHeight(1) + 3 }

// compose builds the frame from the cached pane drawings.
func (m *Model) compose() {
	if m.lay.mode == layoutTooSmall {
		w, h := minSize()
		msg := fmt.Sprintf("terminal too small: %dx%d\nvkwatch needs at least %dx%d\n\nq quits", m.width, m.height, w, h)
		if len(m.panes) == 0 {
			msg = "vkwatch: no servers to watch\n\nq quits"
		}
		// Cut each line to the terminal: Place cannot shrink what is wider.
		lines := strings.Split(msg, "\n")
		for i, l := range lines {
			lines[i] = ansi.Truncate(l, m.width, "…")
		}
		m.view = lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center,
			m.st.tooSmall.Render(strings.Join(lines, "\n")))
		return
	}
	var b strings.Builder
	b.WriteString(m.topLine())
	b.WriteByte('\n')
	if m.table.open {
		// The table takes the panes' place; they are not drawn meanwhile.
		lines := m.table.view(m.st, m.reports[:m.shownReports], m.width, tableRows(m.bodyHeight()))
		b.WriteString(strings.Join(lines, "\n"))
		m.finish(&b)
		return
	}
	boxes := make([][]string, len(m.panes))
	for i, p := range m.panes {
		if m.lay.mode == layoutSingle && i != m.focus {
			continue // not on screen: leave its cached box alone
		}
		k := boxKey{width: m.lay.widths[i], focused: i == m.focus && len(m.panes) > 1, window: m.cfg.History}
		boxes[i] = p.box(m.st, m.prog, k)
	}
	switch m.lay.mode {
	case layoutSide:
		// Boxes of one layout have the same height and exact widths: join
		// them line by line, no measuring needed.
		for y := range boxes[0] {
			if y > 0 {
				b.WriteByte('\n')
			}
			for _, box := range boxes {
				b.WriteString(box[y])
			}
		}
	case layoutStacked:
		for i, box := range boxes {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.Join(box, "\n"))
		}
	case layoutSingle:
		b.WriteString(strings.Join(boxes[m.focus], "\n"))
	}
	m.finish(&b)
}

// finish adds the footer and the help to the frame in b and keeps it.
func (m *Model) finish(b *strings.Builder) {
	b.WriteByte('\n')
	b.WriteString(m.footerLine())
	b.WriteByte('\n')
	b.WriteString(m.helpView())
	m.view = b.String()
}

// bodyHeight is the lines between the title line and the footer.
func (m *Model) bodyHeight() int { return m.height - 2 - m.lay.helpH }

// helpView renders the help, cached: it only changes with the width, the
// full/short switch and the labels of the pause and reports keys. While a
// save waits for confirmation the line says how to give it instead: the
// warning in the footer may be cut short on a narrow terminal.
func (m *Model) helpView() string {
	k := helpKey{width: m.width, full: m.lay.fullHelp, paused: m.paused, table: m.table.open, confirm: m.confirm}
	if m.helpFor != k || m.helpText == "" {
		h := m.help
		h.ShowAll = k.full
		if k.confirm != "" {
			m.helpText = ansi.Truncate(m.st.warn.r(k.confirm+" again: save anyway")+
				m.st.dim.r(" • any other key: cancel"), m.width, "…")
		} else {
			// bubbles/help adds an entry that overflows when not even its
			// "…" fits: cut every line to the terminal here.
			m.helpText = strings.Join(fitLines(m.width, strings.Split(h.View(m.keys), "\n")...), "\n")
		}
		m.helpFor = k
	}
	return m.helpText
}

// setStatus sets the status shown at the right of the title line.
func (m *Model) setStatus(s string) {
	if s != m.status {
		m.status = s
		m.compose()
	}
}

// topLine is the title, the banner and the marks that change what the panes
// mean: paused, or only one of two panes shown.
func (m *Model) topLine() string {
	left := m.st.top.r("vkwatch")
	if m.cfg.Banner != "" {
		left += m.st.dim.r(" · ") + m.st.banner.r(m.cfg.Banner)
	}
	var right []string
	if m.status != "" {
		right = append(right, m.st.banner.r(m.status))
	}
	if m.lay.mode == layoutSingle && len(m.panes) > 1 && !m.table.open {
		right = append(right, m.st.dim.r(fmt.Sprintf("pane %d/%d, tab switches", m.focus+1, len(m.panes))))
	}
	if m.paused {
		right = append(right, m.st.paused.r(" PAUSED at "+m.pausedAt.Format("15:04:05")+" · p resumes "))
	}
	r := strings.Join(right, "  ")
	rw := lipgloss.Width(r)
	// The marks on the right say what the panes mean (paused, which pane,
	// playback): cut the banner before them.
	if room := m.width - rw - 1; room >= 10 && lipgloss.Width(left) > room {
		left = ansi.Truncate(left, room, "…")
	}
	gap := max(m.width-lipgloss.Width(left)-rw, 1)
	return ansi.Truncate(left+strings.Repeat(" ", gap)+r, m.width, "…")
}

// footerLine renders the latest command answers and notes on one line.
func (m *Model) footerLine() string {
	parts := make([]string, 0, len(m.footer))
	for _, e := range m.footer {
		switch e.kind {
		case footNote:
			parts = append(parts, m.st.dim.r(e.text))
		case footOK:
			parts = append(parts, m.st.ok.r(e.text))
		case footErr:
			parts = append(parts, m.st.err.r(e.text))
		}
	}
	return ansi.Truncate(strings.Join(parts, m.st.dim.r("  │  ")), m.width, "…")
}

// onKey handles a key press. Every key first clears the footer: an answer
// stays until the user does something else.
//
// A key held back by a memory warning (confirm) is sent if it comes again
// now; any other key drops it and does what it always does.
func (m Model) onKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.footer = nil
	confirmed := m.confirm != "" && k.String() == m.confirm
	m.confirm = ""
	var cmd tea.Cmd
	switch {
	case key.Matches(k, m.keys.Quit):
		return m, tea.Quit
	case key.Matches(k, m.keys.Save):
		cmd = m.fork(false, confirmed, "BGSAVE")
	case key.Matches(k, m.keys.Rewrite):
		cmd = m.fork(false, confirmed, "BGREWRITEAOF")
	case key.Matches(k, m.keys.SaveAll):
		cmd = m.fork(true, confirmed, "BGSAVE")
	case key.Matches(k, m.keys.RewriteAll):
		cmd = m.fork(true, confirmed, "BGREWRITEAOF")
	case key.Matches(k, m.keys.Reports):
		m.setTable(!m.table.open)
	case key.Matches(k, m.keys.Close):
		switch {
		case m.help.ShowAll && (m.helpOverTable || !m.table.open):
			m.setHelp(false)
			m.relayout()
			m.refresh(true)
			return m, nil
		case m.table.open:
			m.setTable(false)
		}
	case key.Matches(k, m.keys.Up), key.Matches(k, m.keys.Down):
		d := 1
		if key.Matches(k, m.keys.Up) {
			d = -1
		}
		m.table.scroll(d, m.shownReports, tableRows(m.bodyHeight()))
	case key.Matches(k, m.keys.Next):
		m.focus = (m.focus + 1) % len(m.panes)
	case key.Matches(k, m.keys.Prev):
		m.focus = (m.focus + len(m.panes) - 1) % len(m.panes)
	case key.Matches(k, m.keys.Pause):
		m.paused = !m.paused
		m.keys.Pause.SetHelp("p", map[bool]string{true: "resume", false: "pause"}[m.paused])
		if m.paused {
			m.pausedAt = m.cfg.Now()
		} else {
			m.refresh(false)
			return m, nil
		}
	case key.Matches(k, m.keys.Help):
		m.setHelp(!m.help.ShowAll)
		m.relayout()
		m.refresh(true)
		return m, nil
	}
	m.compose()
	return m, cmd
}

// setHelp shows or hides the full help and relabels its key.
func (m *Model) setHelp(full bool) {
	m.help.ShowAll = full
	m.helpOverTable = full && m.table.open
	m.keys.Help.SetHelp("?", map[bool]string{true: "less", false: "more"}[full])
}

// setTable opens or closes the reports table. It opens on the newest
// reports and follows them as more arrive.
func (m *Model) setTable(open bool) {
	m.table.open = open
	m.table.follow = true
	m.helpOverTable = false
	m.keys.setTable(open)
	if !open {
		m.refresh(true) // the charts were not drawn while it was open
	}
}

// targets are the servers a command goes to: the focused one, or all.
func (m *Model) targets(all bool) []int {
	if !all {
		return []int{m.focus}
	}
	t := make([]int, len(m.panes))
	for i := range t {
		t[i] = i
	}
	return t
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
	for _, i := range m.targets(all) {
		p := m.panes[i]
		if text, ok := forkRisk(p.addr, p.live.sample, p.live.report, aof); ok {
			warned = append(warned, footEntry{node: p.id, kind: footErr, text: text})
		}
	}
	if len(warned) == 0 {
		return m.send(all, command)
	}
	m.confirm = map[[2]bool]string{{false, false}: "b", {true, false}: "B", {false, true}: "a", {true, true}: "A"}[[2]bool{all, aof}]
	verb := "save"
	if aof {
		verb = "rewrite"
	}
	again := "; press " + m.confirm + " again to " + verb + " anyway"
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

// canSend reports whether a command may be sent at all, without saying why
// not: send does.
func (m *Model) canSend() bool {
	return len(m.panes) > 0 && !m.cfg.ReadOnly && m.cfg.Send != nil
}

// send returns the command that sends args to the focused server, or to
// every server at once (one Cmd each in a tea.Batch, so they run
// concurrently rather than one after the other's answer).
func (m *Model) send(all bool, args ...string) tea.Cmd {
	if len(m.panes) == 0 {
		return nil
	}
	name := args[0]
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
	for _, i := range targets {
		p := m.panes[i]
		m.setFooter(footEntry{node: p.id, kind: footNote, text: fmt.Sprintf("sending %s to %s…", name, p.addr)})
		cmds = append(cmds, func() tea.Msg {
			send(p.id, args...)
			return nil
		})
	}
	return tea.Batch(cmds...)
}
