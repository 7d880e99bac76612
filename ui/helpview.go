package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source/fleet"
)

// The help: one line of keys at the bottom, or with ? the full help, the
// keys of what is open by kind (openHelp makes both from the views'
// bindings). While a command waits for confirmation its line says how to
// give it instead.

// helpView is the help's component: bubbles/help, its key, and its
// drawing, cached.
type helpView struct {
	Help  key.Binding
	model help.Model

	text  string // the help drawn, for key
	lines []string
	key   helpKey
}

// helpKey is what a cached help view was drawn for.
type helpKey struct {
	width                int
	full, paused, scales bool
	base, body           viewID
	shown                int
	confirm, held        string
}

// newHelpView returns the help's component.
func newHelpView(*Model) component {
	return &helpView{
		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more")),
		model: help.New(),
	}
}

// SetSize implements component: the help's lines are cut to w.
func (h *helpView) SetSize(w, _ int) { h.model.Width = w }

// Toggle implements component.
func (h *helpView) Toggle() *key.Binding { return &h.Help }

// SyncKeys implements component: ? says what pressing it does.
func (h *helpView) SyncKeys(c *Model) {
	h.Help.SetHelp("?", map[bool]string{true: "less", false: "more"}[c.stack.has(viewHelp)])
}

// Update implements component: the help has no keys but its toggle.
func (h *helpView) Update(*Model, tea.KeyMsg) bool { return false }

// ShortHelp implements component; the help never fills the body.
func (h *helpView) ShortHelp(*Model) []key.Binding { return nil }

// FullHelp implements component.
func (h *helpView) FullHelp(*Model) []key.Binding { return []key.Binding{h.Help} }

// height is the lines the help takes, full or not.
func (h *helpView) height(c *Model, full bool) int {
	if !full {
		return 1
	}
	return lipgloss.Height(h.model.FullHelpView(openHelp{c}.FullHelp()))
}

// View implements component: the help's lines, cached. They only change
// with the width, the full/short switch, the views open and the labels
// of the keys; while a save waits for confirmation the line says how to
// give it instead: the warning in the footer may be cut short on a
// narrow terminal.
func (h *helpView) View(c *Model) []string {
	k := helpKey{width: c.width, full: c.lay.fullHelp, paused: c.paused, scales: c.perPane,
		base: c.stack.base(), body: c.stack.body(), shown: len(c.shown), confirm: c.confirm}
	if c.fleet != nil && c.fleet.roll() != nil && c.fleet.roll().State() == fleet.RollHeld {
		k.held = c.fleet.heldWarning()
	}
	if h.key == k && h.lines != nil {
		return h.lines
	}
	st := c.st
	switch {
	case k.held != "" && k.confirm == "" && !k.full:
		// The roll waits for the user: say how to answer it, however
		// narrow the terminal (its line may be cut).
		h.text = ansi.Truncate(st.warn.r("B: save it anyway")+
			st.dim.r(" • esc: cancel the rolling save"), c.width, "…")
	case k.confirm != "":
		h.text = ansi.Truncate(st.warn.r(k.confirm+" again: "+c.confirmWhat)+
			st.dim.r(" • any other key: "+map[bool]string{true: "keep it", false: "cancel"}[k.confirm == "x"]), c.width, "…")
	default:
		hm := h.model
		hm.ShowAll = k.full
		// bubbles/help adds an entry that overflows when not even its
		// "…" fits: cut every line to the terminal here.
		h.text = strings.Join(fitLines(c.width, strings.Split(hm.View(openHelp{c}), "\n")...), "\n")
	}
	h.lines, h.key = strings.Split(h.text, "\n"), k
	return h.lines
}
