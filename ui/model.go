// Package ui is vkwatch's terminal interface: a bubbletea model that folds
// source.Event values into per-server state and draws one pane per server.
//
// It never opens a connection. Commands the user asks for (BGSAVE,
// BGREWRITEAOF) leave through Config.Send, called only inside a tea.Cmd, and
// their answers come back later as source.EventCommand events.
package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
)

// Config is everything the UI needs from its caller.
type Config struct {
	// Servers are the display addresses, one or two panes, in order;
	// Event.Server indexes this slice.
	Servers []string
	// History is how much time the charts keep (default 2m).
	History time.Duration
	// Interval is the sampling interval (default 200ms); with History it
	// sizes the chart buffers.
	Interval time.Duration
	// Send sends a command to server. It is called only inside a tea.Cmd
	// and may block; its answer arrives later as an EventCommand.
	Send func(server int, args ...string)
	// ReadOnly refuses b/a/B/A with a footer note and never calls Send.
	ReadOnly bool
	// Banner is an optional one-line header above the panes.
	Banner string
	// Now is an optional clock, for tests; time.Now when nil.
	Now func() time.Time
}

// EventMsg carries one event into the model.
type EventMsg source.Event

// EventsMsg carries a batch of events; the wiring coalesces events so the UI
// is not redrawn for each one.
type EventsMsg []source.Event

// Model is the vkwatch UI. It implements tea.Model.
type Model struct {
	cfg     Config
	reports []source.SaveReport
}

// New builds a model for cfg, filling defaults.
func New(cfg Config) Model {
	return Model{cfg: cfg}
}

// Init implements tea.Model; the model needs no start-up command.
func (m Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && (k.String() == "q" || k.String() == "ctrl+c") {
		return m, tea.Quit
	}
	return m, nil
}

// View implements tea.Model.
func (m Model) View() string { return "vkwatch" }

// Reports returns every save report seen so far, oldest first.
func (m Model) Reports() []source.SaveReport {
	return append([]source.SaveReport(nil), m.reports...)
}
