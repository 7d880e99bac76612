package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/ui/view"
)

// The panes view: the servers shown (one or two, or the fleet's node
// opened with enter), side by side, stacked, or the focused one alone, as
// the layout says. Which panes show and which has focus are the model's
// (commands go to the focused server whatever view is open); this view
// draws them and moves the focus.

// panesView is the panes' component: its keys.
type panesView struct {
	Next key.Binding
	Prev key.Binding
	Back key.Binding // help only: esc from a node's pane to the fleet view

	fleet bool // a fleet's node(s): esc goes back to the rows

	// panes are the panes on screen, laid out by mode; focus indexes
	// them. The model says which (show).
	panes []*pane
	mode  layoutMode
	focus int
}

// show says which panes are on screen, how they are laid out and which
// has the focus.
func (p *panesView) show(panes []*pane, mode layoutMode, focus int) {
	p.panes, p.mode, p.focus = panes, mode, focus
}

// newPanesView returns the panes' component for o's servers.
func newPanesView(o viewOpts) view.Component {
	p := &panesView{
		Next:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Back:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "fleet")),
		fleet: o.fleet != nil,
	}
	if !p.fleet && o.servers < 2 {
		// With one server focus moves mean nothing.
		p.Next.SetEnabled(false)
		p.Prev.SetEnabled(false)
	}
	return p
}

// SetSize implements view.Component: the model sizes each pane by the layout.
func (p *panesView) SetSize(w, h int) {}

// Toggle implements view.Component: the panes are a base.
func (p *panesView) Toggle() *key.Binding { return nil }

// SyncKeys implements view.Component. In a fleet, focus moves only between
// two nodes shown side by side, and esc goes back to the rows.
func (p *panesView) SyncKeys(o view.Open) {
	if !p.fleet {
		p.Back.SetEnabled(false)
		return
	}
	p.Back.SetEnabled(o.Base && !o.Covered)
	p.Next.SetEnabled(o.Base && o.Shown == 2)
	p.Prev.SetEnabled(o.Base && o.Shown == 2)
}

// Update implements view.Component: tab and shift+tab move the focus, even
// under the table (b saves the focused server there too).
func (p *panesView) Update(_ *view.Context, msg tea.Msg) (bool, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	n := len(p.panes)
	switch {
	case key.Matches(k, p.Next) && n > 0:
		return true, view.FocusMsg((p.focus + 1) % n)
	case key.Matches(k, p.Prev) && n > 0:
		return true, view.FocusMsg((p.focus + n - 1) % n)
	}
	return false, nil
}

// ShortHelp implements view.Component. What does not fit is cut from the
// end, so the order is by need at 80 columns: ? and q fit there, and ?
// lists the rest; tab comes last, since the title line says "tab
// switches" where only one pane fits.
func (p *panesView) ShortHelp(h view.HelpKeys) []key.Binding {
	g, cost, reports, more := h.Keys, h.Toggles[view.Cost], h.Toggles[view.Reports], h.Toggles[view.Help]
	if p.fleet {
		return []key.Binding{p.Back, g.Save, cost, reports, more, g.Quit, g.Scale, g.Pause, g.Rewrite, g.Cancel, p.Next}
	}
	return []key.Binding{g.Save, g.Both, cost, reports, g.Scale, more, g.Quit, g.Pause, g.Rewrite, g.Cancel, p.Next}
}

// FullHelp implements view.Component.
func (p *panesView) FullHelp() []key.Binding { return []key.Binding{p.Back, p.Next, p.Prev} }

// View implements view.Component: the panes' boxes, laid out as the layout
// says.
func (p *panesView) View(c *view.Context) []string {
	boxes := make([][]string, len(p.panes))
	for i, pn := range p.panes {
		if p.mode == layoutSingle && i != p.focus {
			continue // not on screen: leave its cached box alone
		}
		k := boxKey{focused: i == p.focus && len(p.panes) > 1}
		boxes[i] = pn.box(c.Styles, c.Prog, c.Store.View(pn.id), k)
	}
	switch p.mode {
	case layoutSide:
		// Boxes of one layout have the same height and exact widths: join
		// them line by line, no measuring needed.
		out := make([]string, len(boxes[0]))
		for y := range boxes[0] {
			var b strings.Builder
			for _, box := range boxes {
				b.WriteString(box[y])
			}
			out[y] = b.String()
		}
		return out
	case layoutStacked:
		var out []string
		for _, box := range boxes {
			out = append(out, box...)
		}
		return out
	}
	return boxes[p.focus]
}
