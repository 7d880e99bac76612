package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vkwatch/vkwatch/ui/text"
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
func newHelpView(viewOpts) component {
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
func (h *helpView) SyncKeys(o openState) {
	h.Help.SetHelp("?", map[bool]string{true: "less", false: "more"}[o.help])
}

// Update implements component: the help has no keys but its toggle.
func (h *helpView) Update(*viewCtx, tea.KeyMsg) (bool, request) { return false, nil }

// ShortHelp implements component; the help never fills the body.
func (h *helpView) ShortHelp(helpKeys) []key.Binding { return nil }

// FullHelp implements component.
func (h *helpView) FullHelp() []key.Binding { return []key.Binding{h.Help} }

// height is the lines the help of km takes, full or not.
func (h *helpView) height(km keyHelp, full bool) int {
	if !full {
		return 1
	}
	return lipgloss.Height(h.model.FullHelpView(km.FullHelp()))
}

// View implements component: the help's lines, cached by what they show
// (the width, the keys and their labels, the prompt). While a command
// waits for its key again, or a rolling save is held, the line says how
// to answer instead: the warning in the footer may be cut short on a
// narrow terminal.
func (h *helpView) View(c *viewCtx) []string {
	k := h.cacheKey(c)
	if h.lines != nil && h.key == k {
		return h.lines
	}
	st, w, p := c.st, h.model.Width, c.prompt
	var out string
	switch {
	case p.held != "" && p.key == "" && !c.full:
		// The roll waits for the user: say how to answer it, however
		// narrow the terminal (its line may be cut).
		out = text.FitLine(st.Warn.R("B: save it anyway")+st.Dim.R(" • esc: cancel the rolling save"), w)
	case p.key != "":
		out = text.FitLine(st.Warn.R(p.key+" again: "+p.what)+st.Dim.R(" • any other key: "+p.other), w)
	default:
		hm := h.model
		hm.ShowAll = c.full
		// bubbles/help adds an entry that overflows when not even its
		// "…" fits: cut every line to the terminal here.
		out = strings.Join(text.FitLines(w, strings.Split(hm.View(c.help), "\n")...), "\n")
	}
	h.lines, h.key = strings.Split(out, "\n"), k
	return h.lines
}

// cacheKey is what the help's lines show: the width, the prompt, and
// every binding's keys and label, in order.
func (h *helpView) cacheKey(c *viewCtx) string {
	b := &h.b
	b.Reset()
	fmt.Fprintf(b, "%d %v %q %q %q %q|", h.model.Width, c.full, c.prompt.key, c.prompt.what, c.prompt.other, c.prompt.held)
	put := func(bs []key.Binding) {
		for _, k := range bs {
			if k.Enabled() {
				b.WriteString(k.Help().Key + "\x00" + k.Help().Desc + "\x00")
			}
		}
		b.WriteByte('|')
	}
	put(c.help.short)
	for _, col := range c.help.full {
		put(col)
	}
	return b.String()
}
