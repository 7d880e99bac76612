// Package helpview is the help: one line of keys at the bottom, or with ?
// the full help, the keys of what is open by kind (the root makes both from
// the views' bindings, view.KeyHelp). While a command waits for
// confirmation its line says how to give it instead.
package helpview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
)

// Model is the help's component: bubbles/help, its key, and its
// drawing, cached by what it draws.
type Model struct {
	Help  key.Binding
	model help.Model

	lines []string
	key   string // what lines were drawn for
	b     strings.Builder
}

// New returns the help's component.
func New() *Model {
	return &Model{
		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more")),
		model: help.New(),
	}
}

// SetSize implements view.Component: the help's lines are cut to w.
func (h *Model) SetSize(w, _ int) { h.model.Width = w }

// Toggle implements view.Component.
func (h *Model) Toggle() *key.Binding { return &h.Help }

// SyncKeys implements view.Component: ? says what pressing it does.
func (h *Model) SyncKeys(o view.Open) {
	h.Help.SetHelp("?", map[bool]string{true: "less", false: "more"}[o.Help])
}

// Update implements view.Component: the help has no keys but its toggle.
func (h *Model) Update(*view.Context, tea.Msg) (bool, tea.Msg) { return false, nil }

// ShortHelp implements view.Component; the help never fills the body.
func (h *Model) ShortHelp(view.HelpKeys) []key.Binding { return nil }

// FullHelp implements view.Component.
func (h *Model) FullHelp() []key.Binding { return []key.Binding{h.Help} }

// Height is the lines the help of km takes, full or not.
func (h *Model) Height(km view.KeyHelp, full bool) int {
	if !full {
		return 1
	}
	return lipgloss.Height(h.fullView(km.FullHelp()))
}

// fullView is the full help of groups in the width: its columns side by
// side where they fit, else neighbouring columns stacked into one, as
// few lines as that takes. bubbles/help cuts the columns that do not
// fit: the keys they list would be missing.
func (h *Model) fullView(groups [][]key.Binding) string {
	var gs [][]key.Binding
	for _, g := range groups {
		if slices.ContainsFunc(g, key.Binding.Enabled) {
			gs = append(gs, g)
		}
	}
	hm := h.model
	hm.Width = 0 // measured whole: nothing cut
	best, bestH := "", 0
	// Each way of stacking neighbours: bit i set stacks group i+1 under
	// group i (a few groups: at most 2^4 ways).
	for mask := 0; mask < 1<<max(len(gs)-1, 0); mask++ {
		var cols [][]key.Binding
		for i, g := range gs {
			if i > 0 && mask&(1<<(i-1)) != 0 {
				cols[len(cols)-1] = append(slices.Clip(cols[len(cols)-1]), g...)
				continue
			}
			cols = append(cols, g)
		}
		v := hm.FullHelpView(cols)
		if h.model.Width > 0 && lipgloss.Width(v) > h.model.Width {
			continue
		}
		if ht := lipgloss.Height(v); best == "" || ht < bestH {
			best, bestH = v, ht
		}
	}
	if best == "" {
		// Not even one column fits: cut, as bubbles/help would.
		return h.model.FullHelpView(groups)
	}
	return best
}

// View implements view.Component: the help's lines, cached by what they show
// (the width, the keys and their labels, the prompt). While a command
// waits for its key again, or a rolling save is held, the line says how
// to answer instead: the warning in the footer may be cut short on a
// narrow terminal.
func (h *Model) View(c *view.Context) []string {
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
		drawn := h.model.ShortHelpView(c.Help.ShortHelp())
		if c.Full {
			drawn = h.fullView(c.Help.FullHelp())
		}
		// bubbles/help adds an entry that overflows when not even its
		// "…" fits: cut every line to the terminal here.
		out = strings.Join(text.FitLines(w, strings.Split(drawn, "\n")...), "\n")
	}
	h.lines, h.key = strings.Split(out, "\n"), k
	return h.lines
}

// cacheKey is what the help's lines show: the width, the prompt, and
// every binding's keys and label, in order.
func (h *Model) cacheKey(c *view.Context) string {
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
