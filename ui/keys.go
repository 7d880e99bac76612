package ui

import "github.com/charmbracelet/bubbles/key"

// keyMap gathers every binding in one place; it is also what bubbles/help
// renders, so the help can never disagree with what the keys do.
type keyMap struct {
	Save       key.Binding // BGSAVE on the focused server
	Rewrite    key.Binding // BGREWRITEAOF on the focused server
	SaveAll    key.Binding // BGSAVE on every server at once
	RewriteAll key.Binding // BGREWRITEAOF on every server at once
	Both       key.Binding // help only: B and A in one short-help entry
	Next       key.Binding
	Prev       key.Binding
	Reports    key.Binding // opens and closes the table of save reports
	Close      key.Binding // esc: closes the table, or the full help
	Up         key.Binding // scrolls the table; enabled only while it is open
	Down       key.Binding
	Scroll     key.Binding // help only: up and down in one entry
	Pause      key.Binding
	Help       key.Binding
	Quit       key.Binding

	tableOpen bool // the reports table is open: its keys come first in the short help
}

func newKeyMap(servers int) keyMap {
	k := keyMap{
		Save:       key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "bgsave")),
		Rewrite:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "bgrewriteaof")),
		SaveAll:    key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "bgsave both")),
		RewriteAll: key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "bgrewriteaof both")),
		Both:       key.NewBinding(key.WithKeys("B", "A"), key.WithHelp("B/A", "both")),
		Next:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		Prev:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Reports:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reports")),
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
	k.setTable(false)
	return k
}

// setTable switches the bindings that only mean something while the
// reports table is open, and the label of the key that opens it.
func (k *keyMap) setTable(open bool) {
	k.tableOpen = open
	k.Up.SetEnabled(open)
	k.Down.SetEnabled(open)
	k.Scroll.SetEnabled(open)
	if open {
		k.Reports.SetHelp("r/esc", "close")
	} else {
		k.Reports.SetHelp("r", "reports")
	}
}

// ShortHelp implements help.KeyMap. What does not fit is cut from the
// end, so the order is by need at 80 columns: tab comes last, since there
// the title line says "tab switches" anyway (only one pane fits); while the
// table is open its keys come first, and the save keys after quit.
func (k keyMap) ShortHelp() []key.Binding {
	if k.tableOpen {
		return []key.Binding{k.Reports, k.Scroll, k.Pause, k.Help, k.Quit, k.Save, k.Rewrite, k.Both, k.Next}
	}
	return []key.Binding{k.Save, k.Rewrite, k.Both, k.Reports, k.Pause, k.Help, k.Quit, k.Next}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Save, k.Rewrite, k.SaveAll, k.RewriteAll},
		{k.Next, k.Prev},
		{k.Reports, k.Up, k.Down, k.Close},
		{k.Pause, k.Help, k.Quit},
	}
}
