package ui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
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
	return lipgloss.Height(h.fullView(km.FullHelp()))
}

// fullView is the full help of groups in the width: its columns side by
// side where they fit, else neighbouring columns stacked into one, as
// few lines as that takes. bubbles/help cuts the columns that do not
// fit: the keys they list would be missing.
func (h *helpView) fullView(groups [][]key.Binding) string {
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
	var text string
	switch {
	case p.held != "" && p.key == "" && !c.full:
		// The roll waits for the user: say how to answer it, however
		// narrow the terminal (its line may be cut).
		text = fitLine(st.warn.r("B: save it anyway")+st.dim.r(" • esc: cancel the rolling save"), w)
	case p.key != "":
		text = fitLine(st.warn.r(p.key+" again: "+p.what)+st.dim.r(" • any other key: "+p.other), w)
	default:
		view := h.model.ShortHelpView(c.help.ShortHelp())
		if c.full {
			view = h.fullView(c.help.FullHelp())
		}
		// bubbles/help adds an entry that overflows when not even its
		// "…" fits: cut every line to the terminal here.
		text = strings.Join(fitLines(w, strings.Split(view, "\n")...), "\n")
	}
	h.lines, h.key = strings.Split(text, "\n"), k
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
