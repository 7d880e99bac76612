package ui

import "github.com/charmbracelet/bubbles/key"

// keyMap gathers every binding in one place; it is also what bubbles/help
// renders, so the help can never disagree with what the keys do.
type keyMap struct {
	Save       key.Binding // BGSAVE on the focused server
	Rewrite    key.Binding // BGREWRITEAOF on the focused server
	SaveAll    key.Binding // BGSAVE on every server at once
	RewriteAll key.Binding // BGREWRITEAOF on every server at once
	Cancel     key.Binding // BGSAVE CANCEL on the focused server (Valkey 8.1+)
	Both       key.Binding // help only: B and A in one short-help entry
	Next       key.Binding
	Prev       key.Binding
	Reports    key.Binding // opens and closes the table of save reports
	Cost       key.Binding // opens and closes the save cost curves
	CostY      key.Binding // in the cost view: copy-on-write or footprint on Y
	Scale      key.Binding // one scale per metric across panes, or per pane
	Close      key.Binding // esc: closes the table, the cost view, or the full help
	Up         key.Binding // scrolls the table; enabled only while it is open
	Down       key.Binding
	Scroll     key.Binding // help only: up and down in one entry
	Pause      key.Binding
	Help       key.Binding
	Quit       key.Binding

	// The fleet view's keys (three or more servers, or a cluster).
	SelUp   key.Binding // select the row above
	SelDown key.Binding
	Select  key.Binding // help only: up and down in one entry
	Open    key.Binding // the selected node's full pane, or two marked side by side
	Mark    key.Binding // marks a node for enter to compare
	Sort    key.Binding // cycles the rows' order
	Back    key.Binding // help only: esc from a node's pane to the fleet view

	tableOpen bool // the reports table is open: its keys come first in the short help
	costOpen  bool // the cost view is open: likewise
	fleet     bool // a fleet: B is the rolling save, A is not offered
	fleetList bool // the fleet view's rows are on screen (not a node's pane)
	shown     int  // panes on screen, when not the fleet view's rows
}

// newKeyMap returns the bindings for servers servers, as a fleet (the
// fleet view) or not (panes side by side).
func newKeyMap(servers int, fleet bool) keyMap {
	k := keyMap{
		Save:       key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "bgsave")),
		Rewrite:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "bgrewriteaof")),
		SaveAll:    key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "bgsave both")),
		RewriteAll: key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "bgrewriteaof both")),
		Cancel:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "cancel save")),
		Both:       key.NewBinding(key.WithKeys("B", "A"), key.WithHelp("B/A", "both")),
		Next:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Reports:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reports")),
		Cost:       key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cost")),
		CostY:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "cow/footprint")),
		Scale:      key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "scales")),
		Close:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		Up:         key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "older report")),
		Down:       key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "newer report")),
		Scroll:     key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
		Pause:      key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more")),
		Quit:       key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),

		SelUp:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "select up")),
		SelDown: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "select down")),
		Select:  key.NewBinding(key.WithKeys("up", "down", "k", "j"), key.WithHelp("↑/↓", "select")),
		Open:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		// space is replay's play/pause: m marks there.
		Mark: key.NewBinding(key.WithKeys(" ", "m"), key.WithHelp("space/m", "mark")),
		Sort: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "sort")),
		Back: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "fleet")),
	}
	k.fleet = fleet
	if fleet {
		// B would fork every node at once, a primary and its replicas
		// together: in a fleet it is the rolling save, one node per shard
		// (in the fleet view only). A rolling rewrite is not offered.
		k.SaveAll.SetHelp("B", "rolling save")
		k.Both.SetEnabled(false)
		k.sync(viewStack{viewFleet}, 0)
		return k
	}
	if servers < 2 {
		// With one server focus moves mean nothing; B and A still work (they
		// reach the one server), so their help must not promise "both".
		k.SaveAll.SetHelp("B", "bgsave all")
		k.RewriteAll.SetHelp("A", "bgrewriteaof all")
		k.Both.SetEnabled(false)
		k.Next.SetEnabled(false)
		k.Prev.SetEnabled(false)
	}
	k.sync(viewStack{viewPanes}, servers)
	return k
}

// sync switches the bindings to the views open (s) and the panes on
// screen (shown of them): a view's keys work only while it fills the
// body, and the keys that open a view say "close" while it is open.
func (k *keyMap) sync(s viewStack, shown int) {
	table, cost := s.body() == viewTable, s.body() == viewCost
	list := s.base() == viewFleet
	k.tableOpen, k.costOpen = table, cost
	k.fleetList, k.shown = k.fleet && list, shown
	for _, b := range []*key.Binding{&k.SelUp, &k.SelDown, &k.Select, &k.Open, &k.Mark, &k.Sort} {
		b.SetEnabled(k.fleetList && !table && !cost)
	}
	k.Back.SetEnabled(k.fleet && !list && !table && !cost)
	if k.fleet {
		// Focus moves only between two nodes shown side by side.
		k.Next.SetEnabled(!list && shown == 2)
		k.Prev.SetEnabled(!list && shown == 2)
		k.SaveAll.SetEnabled(list)
	}
	k.Help.SetHelp("?", map[bool]string{true: "less", false: "more"}[s.has(viewHelp)])
	k.Up.SetEnabled(table)
	k.Down.SetEnabled(table)
	k.Scroll.SetEnabled(table)
	k.CostY.SetEnabled(cost)
	k.Scale.SetEnabled(!table && !cost)
	k.Reports.SetHelp("r", "reports")
	k.Cost.SetHelp("c", "cost")
	if table {
		k.Reports.SetHelp("r/esc", "close")
	}
	if cost {
		k.Cost.SetHelp("c/esc", "close")
	}
}

// ShortHelp implements help.KeyMap. What does not fit is cut from the
// end, so the order is by need at 80 columns: ? and q fit there, and ?
// lists the rest; tab comes last, since the title line says "tab
// switches" where only one pane fits. While the table or the cost view is
// open its keys come first, and the save keys after quit.
func (k keyMap) ShortHelp() []key.Binding {
	switch {
	case k.tableOpen:
		return []key.Binding{k.Reports, k.Scroll, k.Pause, k.Help, k.Quit, k.Save, k.Rewrite, k.Both, k.Next}
	case k.costOpen:
		return []key.Binding{k.Cost, k.CostY, k.Pause, k.Help, k.Quit, k.Save, k.Both, k.Next}
	case k.fleetList:
		return []key.Binding{k.Select, k.Open, k.SaveAll, k.Help, k.Quit, k.Save, k.Mark, k.Sort, k.Cost, k.Reports, k.Pause, k.Scale, k.Rewrite, k.Cancel}
	case k.fleet:
		return []key.Binding{k.Back, k.Save, k.Cost, k.Reports, k.Help, k.Quit, k.Scale, k.Pause, k.Rewrite, k.Cancel, k.Next}
	}
	return []key.Binding{k.Save, k.Both, k.Cost, k.Reports, k.Scale, k.Help, k.Quit, k.Pause, k.Rewrite, k.Cancel, k.Next}
}

// FullHelp implements help.KeyMap: what works now, by kind. A fleet has
// no B/A for every node at once (B is the rolling save, in the fleet
// view), and its own column of keys.
func (k keyMap) FullHelp() [][]key.Binding {
	if k.fleet {
		return [][]key.Binding{
			{k.Save, k.Rewrite, k.Cancel, k.SaveAll},
			{k.SelUp, k.SelDown, k.Open, k.Mark, k.Sort, k.Back, k.Next, k.Prev},
			{k.Cost, k.CostY, k.Reports, k.Up, k.Down},
			{k.Scale, k.Close, k.Pause, k.Help, k.Quit},
		}
	}
	return [][]key.Binding{
		{k.Save, k.Rewrite, k.SaveAll, k.RewriteAll, k.Cancel},
		{k.Next, k.Prev},
		{k.Cost, k.CostY, k.Reports, k.Up, k.Down},
		{k.Scale, k.Close, k.Pause, k.Help, k.Quit},
	}
}
