package ui

import (
	"github.com/charmbracelet/bubbles/key"

	"github.com/vkwatch/vkwatch/ui/view"
)

// keyMap is the model's own bindings: the commands sent to servers and
// the keys that work in every view. Each view has its own (in its file),
// and the help is made from the bindings of what is open (openHelp), so
// it can never disagree with what the keys do.
type keyMap struct {
	view.Keys // the views' help lines list them too

	fleet bool // a fleet: B is the rolling save, A is not offered
	rows  bool // a fleet's rows are the base: the rolling save starts there
}

// newKeyMap returns the model's bindings for servers servers, as a fleet
// (the fleet view) or not (panes side by side).
func newKeyMap(servers int, fleet bool) keyMap {
	k := keyMap{Keys: view.NewKeys()}
	k.fleet = fleet
	switch {
	case fleet:
		// B would fork every node at once, a primary and its replicas
		// together: in a fleet it is the rolling save, one node per shard
		// (in the fleet view only). A rolling rewrite is not offered.
		k.SaveAll.SetHelp("B", "rolling save")
		k.Both.SetEnabled(false)
	case servers < 2:
		// With one server B and A still work (they reach the one server),
		// so their help must not promise "both".
		k.SaveAll.SetHelp("B", "bgsave all")
		k.RewriteAll.SetHelp("A", "bgrewriteaof all")
		k.Both.SetEnabled(false)
	}
	return k
}

// sync switches the model's bindings to the views open (s): the scales
// mean nothing while the charts are covered, and a fleet's rolling save
// starts from its rows (B and A still answer elsewhere, with a note
// saying where they work, but the help offers them only there).
func (k *keyMap) sync(s viewStack) {
	k.Scale.SetEnabled(!s.covered())
	k.rows = k.fleet && s.base() == viewFleet
}

// commands is the full help's first column: the commands for servers.
// A fleet has no B/A for every node at once (B is the rolling save).
func (k keyMap) commands() []key.Binding {
	if k.fleet && k.rows {
		return []key.Binding{k.Save, k.Rewrite, k.Cancel, k.Method, k.SaveAll}
	}
	if k.fleet {
		return []key.Binding{k.Save, k.Rewrite, k.Cancel, k.Method}
	}
	return []key.Binding{k.Save, k.Rewrite, k.SaveAll, k.RewriteAll, k.Cancel, k.Method}
}
