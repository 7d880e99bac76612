package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/fleetview"
	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/view"
)

// The model's state: what it is given (Config, Node), what it keeps
// (Model), and the small types of its parts. The files of the root stand
// on this one, each on those listed before it: footer.go, commands.go,
// views.go, screen.go, fleet.go, and model.go, the router, on top.

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
