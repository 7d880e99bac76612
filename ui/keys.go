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
	Pause      key.Binding
	Help       key.Binding
	Quit       key.Binding
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
	return k
}

// ShortHelp implements help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Save, k.Rewrite, k.Both, k.Next, k.Pause, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Save, k.Rewrite, k.SaveAll, k.RewriteAll},
		{k.Next, k.Prev},
		{k.Pause, k.Help, k.Quit},
	}
}
