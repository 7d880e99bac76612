package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
)

// The help: one line of keys at the bottom, or with ? the full help, the
// keys of what is open by kind (openHelp makes both from the views'
// bindings). While a command waits for confirmation its line says how to
// give it instead.

// helpView is the help's component: bubbles/help, its key, and its
// drawing, cached by what it draws.
type helpView struct {
	Help  key.Binding
	model help.Model

	lines []string
	key   string // what lines were drawn for
	b     strings.Builder
}

// newHelpView returns the help's component.
func newHelpView(viewOpts) view.Component {
	return &helpView{
		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more")),
		model: help.New(),
	}
}

// SetSize implements view.Component: the help's lines are cut to w.
func (h *helpView) SetSize(w, _ int) { h.model.Width = w }

// Toggle implements view.Component.
func (h *helpView) Toggle() *key.Binding { return &h.Help }

// SyncKeys implements view.Component: ? says what pressing it does.
func (h *helpView) SyncKeys(o view.Open) {
	h.Help.SetHelp("?", map[bool]string{true: "less", false: "more"}[o.Help])
}

// Update implements view.Component: the help has no keys but its toggle.
func (h *helpView) Update(*view.Context, tea.Msg) (bool, tea.Msg) { return false, nil }

// ShortHelp implements view.Component; the help never fills the body.
func (h *helpView) ShortHelp(view.HelpKeys) []key.Binding { return nil }

// FullHelp implements view.Component.
func (h *helpView) FullHelp() []key.Binding { return []key.Binding{h.Help} }

// height is the lines the help of km takes, full or not.
func (h *helpView) height(km view.KeyHelp, full bool) int {
	if !full {
		return 1
	}
	return lipgloss.Height(h.model.FullHelpView(km.FullHelp()))
}

// View implements view.Component: the help's lines, cached by what they show
// (the width, the keys and their labels, the prompt). While a command
// waits for its key again, or a rolling save is held, the line says how
// to answer instead: the warning in the footer may be cut short on a
// narrow terminal.
func (h *helpView) View(c *view.Context) []string {
	k := h.cacheKey(c)
	if h.lines != nil && h.key == k {
		return h.lines
	}
	st, w, p := c.Styles, h.model.Width, c.Prompt
	var out string
	switch {
	case p.Held != "" && p.Key == "" && !c.Full:
		// The roll waits for the user: say how to answer it, however
		// narrow the terminal (its line may be cut).
		out = text.FitLine(st.Warn.R("B: save it anyway")+st.Dim.R(" • esc: cancel the rolling save"), w)
	case p.Key != "":
		out = text.FitLine(st.Warn.R(p.Key+" again: "+p.What)+st.Dim.R(" • any other key: "+p.Other), w)
	default:
		hm := h.model
		hm.ShowAll = c.Full
		// bubbles/help adds an entry that overflows when not even its
		// "…" fits: cut every line to the terminal here.
		out = strings.Join(text.FitLines(w, strings.Split(hm.View(c.Help), "\n")...), "\n")
	}
	h.lines, h.key = strings.Split(out, "\n"), k
	return h.lines
}

// cacheKey is what the help's lines show: the width, the prompt, and
// every binding's keys and label, in order.
func (h *helpView) cacheKey(c *view.Context) string {
	b := &h.b
	b.Reset()
	fmt.Fprintf(b, "%d %v %q %q %q %q|", h.model.Width, c.Full, c.Prompt.Key, c.Prompt.What, c.Prompt.Other, c.Prompt.Held)
	put := func(bs []key.Binding) {
		for _, k := range bs {
			if k.Enabled() {
				b.WriteString(k.Help().Key + "\x00" + k.Help().Desc + "\x00")
			}
		}
		b.WriteByte('|')
	}
	put(c.Help.Short)
	for _, col := range c.Help.Full {
		put(col)
	}
	return b.String()
}
