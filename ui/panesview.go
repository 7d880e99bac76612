package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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
}

// newPanesView returns the panes' component for o's servers.
func newPanesView(o viewOpts) component {
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

// SetSize implements component: the model sizes each pane by the layout.
func (p *panesView) SetSize(w, h int) {}

// Toggle implements component: the panes are a base.
func (p *panesView) Toggle() *key.Binding { return nil }

// SyncKeys implements component. In a fleet, focus moves only between
// two nodes shown side by side, and esc goes back to the rows.
func (p *panesView) SyncKeys(o openState) {
	if !p.fleet {
		p.Back.SetEnabled(false)
		return
	}
	p.Back.SetEnabled(o.base && !o.covered)
	p.Next.SetEnabled(o.base && o.shown == 2)
	p.Prev.SetEnabled(o.base && o.shown == 2)
}

// Update implements component: tab and shift+tab move the focus, even
// under the table (b saves the focused server there too).
func (p *panesView) Update(c *viewCtx, k tea.KeyMsg) (bool, request) {
	n := len(c.panes)
	switch {
	case key.Matches(k, p.Next) && n > 0:
		return true, focusTo((c.focus + 1) % n)
	case key.Matches(k, p.Prev) && n > 0:
		return true, focusTo((c.focus + n - 1) % n)
	}
	return false, nil
}

// ShortHelp implements component. What does not fit is cut from the
// end, so the order is by need at 80 columns: ? and q fit there, and ?
// lists the rest; tab comes last, since the title line says "tab
// switches" where only one pane fits.
func (p *panesView) ShortHelp(h helpKeys) []key.Binding {
	g, cost, reports, more := h.g, h.toggles[viewCost], h.toggles[viewTable], h.toggles[viewHelp]
	if p.fleet {
		return []key.Binding{p.Back, g.Save, cost, reports, more, g.Quit, g.Scale, g.Pause, g.Rewrite, g.Cancel, p.Next}
	}
	return []key.Binding{g.Save, g.Both, cost, reports, g.Scale, more, g.Quit, g.Pause, g.Rewrite, g.Cancel, p.Next}
}

// FullHelp implements component.
func (p *panesView) FullHelp() []key.Binding { return []key.Binding{p.Back, p.Next, p.Prev} }

// View implements component: the panes' boxes, laid out as the layout
// says.
func (p *panesView) View(c *viewCtx) []string {
	boxes := make([][]string, len(c.panes))
	for i, pn := range c.panes {
		if c.mode == layoutSingle && i != c.focus {
			continue // not on screen: leave its cached box alone
		}
		k := boxKey{focused: i == c.focus && len(c.panes) > 1}
		boxes[i] = pn.box(c.st, c.prog, c.store.View(pn.id), k)
	}
	switch c.mode {
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
	return boxes[c.focus]
}
