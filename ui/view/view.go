// Package view is the contract between the root model (package ui) and its
// views, the way bubbles and gh-dash build components: a view is sized by
// SetSize, takes messages in Update, draws in View, and has its own key
// bindings, from which the help is made. A view never sees the root: it
// draws from a Context (the styles, the store, the nodes it speaks of, what
// the user pressed), and what it wants of the root it says in a message
// (NoteMsg, or one of its own package's, as fleetview.OpenMsg), which the
// root handles in the same Update, in order with the keys that follow.
//
// Each view is a package (ui/costview, ui/tableview, ...) and one line in
// the root's table of views.
package view

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/style"
)

// Component is one view.
type Component interface {
	// SetSize gives the view the body: the terminal's width and the lines
	// between the title line and the footer (for the help: its lines).
	SetSize(w, h int)
	// Update takes a message (a key); it reports whether the message was
	// the view's, and what it asks of the root (nil: nothing). The view
	// that fills the body is asked first, then the base.
	Update(c *Context, msg tea.Msg) (bool, tea.Msg)
	// View returns the view's lines.
	View(c *Context) []string
	// Toggle is the key that opens and closes the view; nil for a base.
	Toggle() *key.Binding
	// SyncKeys enables the view's keys for the views open: a view's keys
	// work only while it is on screen.
	SyncKeys(o Open)
	// ShortHelp is the help line while the view fills the body: its keys
	// and others', in the order they are cut from the end.
	ShortHelp(h HelpKeys) []key.Binding
	// FullHelp is the view's share of the full help: its keys, listed in
	// the column of its kind.
	FullHelp() []key.Binding
}

// Opener is a view told when it opens.
type Opener interface{ Opened() }

// Context is what the views draw from, made by the root for each frame,
// as gh-dash's ProgramContext: nothing in it reaches back into the root.
type Context struct {
	Styles *style.Styles
	Prog   progress.Model // the progress bar, drawn with ViewAs only
	Store  *store.Store
	// Nodes are the servers the body speaks of: every node of a fleet,
	// else the panes shown.
	Nodes []source.NodeID
	// PerPane says each pane (or fleet row) has its own scales (s).
	PerPane bool
	// Help is the keys of what is open, and Full whether the full help
	// is; Prompt is a key the user must press again, or a held roll.
	Help   KeyHelp
	Full   bool
	Prompt Prompt
}

// Prompt is what the help line asks of the user instead of listing keys:
// a key whose command waits to be pressed again, or a rolling save held
// by its memory check.
type Prompt struct {
	Key   string // the key to press again; "" when none waits
	What  string // what pressing it again does
	Other string // what any other key does
	Held  string // the memory check's warning that holds a rolling save
}

// Open is what SyncKeys is told of the views open.
type Open struct {
	Fills   bool // the view fills the body: its keys work
	Base    bool // the view is the base the charts are drawn in
	Covered bool // another view covers the base
	Help    bool // the full help is open
	Shown   int  // the panes shown
}

// Keys are the root's own bindings: the commands sent to servers and the
// keys that work in every view.
type Keys struct {
	Save       key.Binding // BGSAVE on the focused server
	Rewrite    key.Binding // BGREWRITEAOF on the focused server
	SaveAll    key.Binding // BGSAVE on every server at once; a fleet's rolling save
	RewriteAll key.Binding // BGREWRITEAOF on every server at once
	Cancel     key.Binding // BGSAVE CANCEL on the focused server (Valkey 8.1+)
	// Method switches the focused server's bgsave-default-method, on a
	// server that can save both ways (source.MethodSwitch). It is the
	// user's own change: nothing puts it back on quit, and the help says so.
	Method key.Binding
	Both   key.Binding // help only: B and A in one short-help entry
	Scale  key.Binding // one scale per chart across panes, or per pane
	Close  key.Binding // esc: closes the view opened last
	Pause  key.Binding
	Shot   key.Binding // S: the screen as an SVG file
	Quit   key.Binding // q: quits (exit status 0)
	// Interrupt is ctrl+c: quits at once, as an interrupt (exit status
	// 130). The terminal (ui/tty) takes ctrl+c before the model sees it;
	// the model does the same when it is run without one.
	Interrupt key.Binding
}

// NewKeys returns the root's bindings for two servers or more, not a
// fleet: the root changes the help of B and A for one server or a fleet.
func NewKeys() Keys {
	return Keys{
		Save:       key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "bgsave")),
		Rewrite:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "bgrewriteaof")),
		SaveAll:    key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "bgsave both")),
		RewriteAll: key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "bgrewriteaof both")),
		Cancel:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "cancel save")),
		Method:     key.NewBinding(key.WithKeys("M"), key.WithHelp("M", "fork⇄forkless (kept on quit)")),
		Both:       key.NewBinding(key.WithKeys("B", "A"), key.WithHelp("B/A", "both")),
		Scale:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "scales")),
		Close:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Shot:       key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "screen to SVG")),
		Quit:       key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		Interrupt:  key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now, exit 130")),
	}
}

// Name names a view in the root's table, for the help lines of others.
type Name string

// The views others' help lines name.
const (
	Fleet   Name = "fleet"
	Panes   Name = "panes"
	Cost    Name = "cost"
	Reports Name = "reports"
	Help    Name = "help"
)

// HelpKeys are the bindings a view's help line shows beside its own: the
// root's, the views' toggles by name (a zero Binding, never shown, for a
// view the root has not) and the panes' focus key.
type HelpKeys struct {
	Keys
	Toggles map[Name]key.Binding
	Next    key.Binding
}

// KeyHelp is the help of what is open, as bubbles/help draws it: the
// short line and the full help's columns.
type KeyHelp struct {
	Short []key.Binding
	Full  [][]key.Binding
}

// ShortHelp implements help.KeyMap.
func (k KeyHelp) ShortHelp() []key.Binding { return k.Short }

// FullHelp implements help.KeyMap.
func (k KeyHelp) FullHelp() [][]key.Binding { return k.Full }

// SyncToggle makes the toggle of a view in the base's place say what
// pressing it does: open the view (label) while it is closed, close it (as
// esc does) while it fills the body; the view's own keys work only then.
func SyncToggle(o Open, toggle *key.Binding, label string, keys ...*key.Binding) {
	k := toggle.Keys()[0]
	toggle.SetHelp(k, label)
	if o.Fills {
		toggle.SetHelp(k+"/esc", "close")
	}
	for _, b := range keys {
		b.SetEnabled(o.Fills)
	}
}

// NoteMsg asks the root to put a note in the footer.
type NoteMsg string
