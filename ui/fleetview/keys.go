package fleetview

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/words"
)

// Keys are the keys of the fleet view's rows.
type Keys struct {
	SelUp   key.Binding // select the row above
	SelDown key.Binding
	Select  key.Binding // help only: up and down in one entry
	Open    key.Binding // the selected node's full pane, or two marked side by side
	Mark    key.Binding // marks a node for enter to compare
	Sort    key.Binding // cycles the rows' order
	Filter  key.Binding // / types a filter of the rows
}

func newKeys() Keys {
	return Keys{
		SelUp:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select up")),
		SelDown: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "select down")),
		Select:  key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "select")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		// space is replay's play/pause: m marks there.
		Mark:   key.NewBinding(key.WithKeys(" ", "m"), key.WithHelp("space/m", "mark")),
		Sort:   key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort")),
		Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	}
}

// Toggle implements view.Component: the rows are a base (esc from a node's
// pane comes back to them).
func (f *Model) Toggle() *key.Binding { return nil }

// SyncKeys implements view.Component: the rows' keys work while they fill
// the body.
func (f *Model) SyncKeys(o view.Open) {
	on := o.Fills
	k := &f.keys
	for _, b := range []*key.Binding{&k.SelUp, &k.SelDown, &k.Select, &k.Open, &k.Mark, &k.Sort, &k.Filter} {
		b.SetEnabled(on)
	}
}

// ShortHelp implements view.Component.
func (f *Model) ShortHelp(h view.HelpKeys) []key.Binding {
	g, k := h.Keys, &f.keys
	return []key.Binding{k.Select, k.Open, g.SaveAll, h.Toggles[view.Help], g.Quit, g.Save, k.Filter, k.Mark, k.Sort,
		h.Toggles[view.Cost], h.Toggles[view.Reports], g.Pause, g.Scale, g.Rewrite, g.Cancel}
}

// FullHelp implements view.Component.
func (f *Model) FullHelp() []key.Binding {
	k := &f.keys
	return []key.Binding{k.SelUp, k.SelDown, k.Open, k.Mark, k.Sort, k.Filter}
}

// View implements view.Component.
func (f *Model) View(c *view.Context) []string {
	return f.view(c.Styles, c.Prog, c.Store, c.PerPane)
}

// OpenMsg asks the root to open nodes' panes in place of the fleet view,
// with a note for the footer.
type OpenMsg struct {
	IDs  []source.NodeID
	Note string
}

// openSelected asks for the two marked nodes side by side, or else the
// selected node's full pane.
func (f *Model) openSelected() OpenMsg {
	ids := f.markedInOrder()
	if len(ids) == 2 {
		return OpenMsg{IDs: ids}
	}
	o := OpenMsg{IDs: []source.NodeID{f.sel}}
	if len(ids) > 2 {
		o.Note = fmt.Sprintf("%d nodes marked: enter shows two side by side (space unmarks); showing the selected one", len(ids))
	}
	return o
}

// Update implements view.Component: the keys of the fleet view's rows.
func (f *Model) Update(_ *view.Context, msg tea.Msg) (bool, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, f.keys.SelUp):
		f.move(-1)
	case key.Matches(k, f.keys.SelDown):
		f.move(1)
	case key.Matches(k, f.keys.Mark):
		f.toggleMark()
		if n := len(f.marked); n > 0 {
			hint := map[bool]string{true: "enter shows the two side by side", false: "mark two and enter shows them side by side"}[n == 2]
			return true, view.NoteMsg(fmt.Sprintf("%d marked: %s", n, hint))
		}
	case key.Matches(k, f.keys.Sort):
		f.nextSort()
	case key.Matches(k, f.keys.Filter):
		f.editing = true
	case key.Matches(k, f.keys.Open):
		return true, f.openSelected()
	default:
		return false, nil
	}
	return true, nil
}

// heldWarning is the warning of the node whose memory check holds the
// rolling save, empty when none does.
func (f *Model) HeldWarning() string {
	if f.Roll() == nil {
		return ""
	}
	if h := f.Roll().Progress().Held; h != nil {
		return words.ForkWarning(h.Node.Addr, h.Risk)
	}
	return ""
}

// escape is esc in the fleet view: it cancels the rolling save's nodes
// not started yet (the saves running finish), or clears the line of one
// that has ended.
func (f *Model) Escape() {
	switch {
	case f.filter != "":
		f.filter, f.shown = "", nil
	case f.RollActive():
		f.Roll().Cancel()
	case f.Roll() != nil && f.Roll().State().Over():
		f.drive.Drop()
	}
}
