// Package panesview is the panes view: one pane per server shown (one or
// two, or a fleet's node opened with enter), side by side, stacked, or the
// focused one alone, as the size allows. A pane is one server's box: what
// it is and how it is connected in the top border, its status blocks
// (ui/status), then its charts, one per entry of the chart table
// (ui/plot) that fits, the marker row of saves and gaps, and the time axis
// in the bottom border. It draws from the store's view of its node, so its
// history is the store's, not its own.
//
// The view owns the panes, which are shown and which has the focus: the
// root asks it (Shown, Focused) where a command goes, and tells it which
// to show (Show) when the fleet view opens a node.
package panesview

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/view"
)

// Mode is how the panes share the body.
type Mode int

const (
	Side     Mode = iota // side by side
	Stacked              // one above the other
	Single               // only the focused pane: two do not fit
	TooSmall             // not even one pane fits
)

// sideWidth is the narrowest pane that goes side by side while stacking
// would also fit: below it, stacked panes get wider charts.
const sideWidth = 80

// The smallest pane: its width, and its height with a row of text each
// and the fewest charts.
const (
	MinWidth  = minPaneW
	MinHeight = minPaneH
	// Chrome is a pane's border and padding, left and right: its text
	// is this much narrower than the pane.
	Chrome = paneChrome
)

// Layout is how n panes share a body of w x h: side by side when each is
// wide enough for its charts, else stacked, else side by side however
// narrow, else the focused pane alone. Panes take the whole height they
// are given: their charts grow with it.
type Layout struct {
	Mode   Mode
	Widths []int // each pane's width, in the order shown
	Height int   // every pane's height: panes of one screen line up
}

// Fit lays n panes out in w x h.
func Fit(n, w, h int) Layout {
	lay := Layout{Widths: make([]int, n)}
	if n == 0 {
		lay.Mode = TooSmall
		return lay
	}
	type try struct {
		mode  Mode
		ok    bool
		share bool // the panes share the width
	}
	// Panes side by side or stacked compare one or two servers (more are
	// the fleet view's rows).
	tries := []try{
		{Side, w/n >= sideWidth && h >= minPaneH, true},
		{Stacked, w >= minPaneW && h >= n*minPaneH, false},
		{Side, w/n >= minPaneW && h >= minPaneH, true},
		{Single, w >= minPaneW && h >= minPaneH, false},
	}
	for _, t := range tries {
		if !t.ok {
			continue
		}
		lay.Mode, lay.Height = t.mode, h
		if t.mode == Stacked {
			lay.Height = h / n // equal heights: the charts of both line up
		}
		for i := range lay.Widths {
			lay.Widths[i] = w
			if t.share {
				lay.Widths[i] = w / n
				if i == n-1 {
					lay.Widths[i] = w - (n-1)*(w/n)
				}
			}
		}
		return lay
	}
	lay.Mode, lay.Height = TooSmall, minPaneH
	for i := range lay.Widths {
		lay.Widths[i] = minPaneW
	}
	return lay
}

// Model is the panes view: its keys, every pane made so far (a fleet makes
// them as nodes are opened), those on screen, and the focus among them.
type Model struct {
	Next key.Binding
	Prev key.Binding
	Back key.Binding // help only: esc from a node's pane to the fleet view

	fleet bool // a fleet's node(s): esc goes back to the rows

	panes []*pane
	byID  map[source.NodeID]*pane
	// shown are the panes on screen, focus indexes them: every pane for
	// one or two servers; in a fleet, the node opened with enter, or the
	// two marked ones, and none while the fleet's rows are the base.
	shown []*pane
	focus int
	lay   Layout
	// w, h is the body the panes were laid out in (SetSize).
	w, h int
	// holds keep the panes' scale tops between frames.
	holds plot.Holds
}

// New returns the panes view for servers servers, or for a fleet's nodes.
func New(servers int, fleet bool) *Model {
	p := &Model{
		Next:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:  key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Back:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "fleet")),
		fleet: fleet,
		byID:  map[source.NodeID]*pane{},
		holds: plot.Holds{},
	}
	if !fleet && servers < 2 {
		// With one server focus moves mean nothing.
		p.Next.SetEnabled(false)
		p.Prev.SetEnabled(false)
	}
	return p
}

// Add makes node id's pane, named addr (made inert), unless it has one: a
// fleet's panes are made when a node is opened, and draw its history from
// the store at once.
func (p *Model) Add(id source.NodeID, addr string) {
	if p.byID[id] != nil {
		return
	}
	pn := newPane(len(p.panes), id, inert.Text(addr))
	p.panes = append(p.panes, pn)
	p.byID[id] = pn
}

// Len is how many panes have been made.
func (p *Model) Len() int { return len(p.panes) }

// Has reports whether node id has a pane.
func (p *Model) Has(id source.NodeID) bool { return p.byID[id] != nil }

// Addr is how node id's pane names it, and whether it has one.
func (p *Model) Addr(id source.NodeID) (string, bool) {
	if pn := p.byID[id]; pn != nil {
		return pn.addr, true
	}
	return "", false
}

// ShowAll puts every pane made on screen, the first with the focus.
func (p *Model) ShowAll() { p.show(p.panes) }

// Show puts the panes of ids on screen (those that have one), the first
// with the focus; none: the panes leave the screen.
func (p *Model) Show(ids ...source.NodeID) {
	var shown []*pane
	for _, id := range ids {
		if pn := p.byID[id]; pn != nil {
			shown = append(shown, pn)
		}
	}
	p.show(shown)
}

func (p *Model) show(shown []*pane) {
	p.shown, p.focus = shown, 0
	p.place()
}

// Shown are the nodes whose panes are on screen, in order.
func (p *Model) Shown() []source.NodeID {
	out := make([]source.NodeID, len(p.shown))
	for i, pn := range p.shown {
		out[i] = pn.id
	}
	return out
}

// Focus is the position of the focused pane among those shown.
func (p *Model) Focus() int { return p.focus }

// Focused is the node of the focused pane and its address; false when no
// pane is on screen.
func (p *Model) Focused() (source.NodeID, string, bool) {
	if p.focus < len(p.shown) {
		pn := p.shown[p.focus]
		return pn.id, pn.addr, true
	}
	return "", "", false
}

// Mode is how the panes on screen are laid out.
func (p *Model) Mode() Mode { return p.lay.Mode }

// ChartWidths are the widths of the shown panes' charts, for how far back
// the store keeps points.
func (p *Model) ChartWidths() []int {
	out := make([]int, 0, len(p.shown))
	for _, pn := range p.shown {
		out = append(out, pn.form.plotW)
	}
	return out
}

// ChartRows are the rows pane i (of those shown) draws of chart id, top
// to bottom, as last drawn: nil where the pane does not show that chart.
func (p *Model) ChartRows(i int, id string) []string {
	pn := p.shown[i]
	for j, k := range pn.form.charts {
		if plot.Charts[k].ID == id {
			return pn.plots[k][:pn.form.rows[j]]
		}
	}
	return nil
}

// StatusRows are the rows of node id's pane above its charts, as last
// drawn, its border included: the state line and the two status blocks.
func (p *Model) StatusRows(id source.NodeID) []string {
	pn := p.byID[id]
	if pn == nil || !pn.boxOK {
		return nil
	}
	return pn.boxLines[1 : 2+pn.form.now+pn.form.last]
}

// SetSize implements view.Component: the panes on screen share the body
// (Fit).
func (p *Model) SetSize(w, h int) {
	p.w, p.h = w, h
	p.place()
}

// place lays the panes on screen out in the body and sizes each.
func (p *Model) place() {
	p.lay = Fit(len(p.shown), p.w, p.h)
	for i, pn := range p.shown {
		pn.SetSize(p.lay.Widths[i], max(p.lay.Height, minPaneH))
	}
}

// Refresh brings the shown panes' charts up to date with the store
// (frozen while paused), and draws what changed unless covered: charts
// hidden behind another view wait, and closing it draws them. Each
// metric has one scale across panes, or each pane its own (perPane).
func (p *Model) Refresh(st *style.Styles, s *store.Store, now, window time.Duration, c plot.Cadence, perPane, covered bool) {
	views := make([]store.View, len(p.shown))
	cols := make([]*plot.Columns, len(p.shown))
	for i, pn := range p.shown {
		views[i] = s.View(pn.id)
		pn.sync(views[i], now, window, c)
		cols[i] = &pn.Columns
	}
	if covered {
		return
	}
	// Each pane's scale tops, shared by the panes unless per pane: the
	// same memory draws at the same height in every pane.
	tops := plot.ScaleTops(cols, nil, perPane, p.holds, now)
	for i, pn := range p.shown {
		if p.lay.Mode != Single || i == p.focus {
			pn.drawCharts(st, views[i], now, tops[i])
		}
	}
}

// Toggle implements view.Component: the panes are a base.
func (p *Model) Toggle() *key.Binding { return nil }

// SyncKeys implements view.Component. In a fleet, focus moves only between
// two nodes shown side by side, and esc goes back to the rows.
func (p *Model) SyncKeys(o view.Open) {
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
func (p *Model) Update(_ *view.Context, msg tea.Msg) (bool, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	n := len(p.shown)
	switch {
	case key.Matches(k, p.Next) && n > 0:
		p.focus = (p.focus + 1) % n
	case key.Matches(k, p.Prev) && n > 0:
		p.focus = (p.focus + n - 1) % n
	default:
		return false, nil
	}
	return true, nil
}

// ShortHelp implements view.Component. What does not fit is cut from the
// end, so the order is by need at 80 columns: ? and q fit there, and ?
// lists the rest; tab comes last, since the title line says "tab
// switches" where only one pane fits.
func (p *Model) ShortHelp(h view.HelpKeys) []key.Binding {
	g, cost, reports, more := h.Keys, h.Toggles[view.Cost], h.Toggles[view.Reports], h.Toggles[view.Help]
	if p.fleet {
		return []key.Binding{p.Back, g.Save, cost, reports, more, g.Quit, g.Scale, g.Pause, g.Rewrite, g.Cancel, p.Next}
	}
	return []key.Binding{g.Save, g.Both, cost, reports, g.Scale, more, g.Quit, g.Pause, g.Rewrite, g.Cancel, p.Next}
}

// FullHelp implements view.Component.
func (p *Model) FullHelp() []key.Binding { return []key.Binding{p.Back, p.Next, p.Prev} }

// View implements view.Component: the panes' boxes, laid out as the layout
// says.
func (p *Model) View(c *view.Context) []string {
	boxes := make([][]string, len(p.shown))
	for i, pn := range p.shown {
		if p.lay.Mode == Single && i != p.focus {
			continue // not on screen: leave its cached box alone
		}
		k := boxKey{focused: i == p.focus && len(p.shown) > 1}
		boxes[i] = pn.box(c.Styles, c.Prog, c.Store.View(pn.id), k)
	}
	switch p.lay.Mode {
	case Side:
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
	case Stacked:
		var out []string
		for _, box := range boxes {
			out = append(out, box...)
		}
		return out
	}
	return boxes[p.focus]
}
