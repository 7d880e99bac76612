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

	tableOpen bool // the reports table is open: its keys come first in the short help
	costOpen  bool // the cost view is open: likewise
}

func newKeyMap(servers int) keyMap {
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
	if servers > 2 {
		// B and A would fork every server at once, a primary and its
		// replicas together; the fleet view's rolling save replaces them.
		k.SaveAll.SetEnabled(false)
		k.RewriteAll.SetEnabled(false)
		k.Both.SetEnabled(false)
	}
	k.setMode(false, false)
	return k
}

// setMode switches the bindings that only mean something while the
// reports table or the cost view is open, and the labels of the keys
// that open them.
func (k *keyMap) setMode(table, cost bool) {
	k.tableOpen, k.costOpen = table, cost
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
	}
	return []key.Binding{k.Save, k.Both, k.Cost, k.Reports, k.Scale, k.Help, k.Quit, k.Pause, k.Rewrite, k.Cancel, k.Next}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Save, k.Rewrite, k.SaveAll, k.RewriteAll, k.Cancel},
		{k.Next, k.Prev},
		{k.Cost, k.CostY, k.Reports, k.Up, k.Down},
		{k.Scale, k.Close, k.Pause, k.Help, k.Quit},
	}
}
