package ui

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestEscClosesTheViewOpenedLast: the views open are one stack, so esc
// closes the help opened over the table before the table, and the table
// opened over the help before the help; c in place of r swaps the two.
func TestEscClosesTheViewOpenedLast(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 200, 50, uitest.ReportsScenario(3))
	table := func(m Model) bool { return strings.Contains(plainView(m), "save reports") }
	cost := func(m Model) bool { return strings.Contains(plainView(m), "save cost curves") }
	full := func(m Model) bool { return strings.Contains(plainView(m), "shift+tab") }
	steps := []struct {
		key               string
		table, cost, full bool
	}{
		{"r", true, false, false},
		{"?", true, false, true},
		{"esc", true, false, false}, // the help, opened last
		{"esc", false, false, false},
		{"?", false, false, true},
		{"r", true, false, true},
		{"c", false, true, true}, // cost takes the table's place, over the help
		{"esc", false, false, true},
		{"esc", false, false, false},
		{"esc", false, false, false}, // nothing over the panes: nothing to close
	}
	for i, s := range steps {
		m, _ = press(m, s.key)
		if table(m) != s.table || cost(m) != s.cost || full(m) != s.full {
			t.Fatalf("step %d (%s): table %v cost %v full help %v, want %v %v %v:\n%s",
				i, s.key, table(m), cost(m), full(m), s.table, s.cost, s.full, plainView(m))
		}
	}
}
