// Package viewtest is what a view's tests give the view: a store fed with
// one of ui/uitest's timelines and a view.Context over it, the way the
// root model makes them, so that each view is made, keyed and drawn alone,
// and its lines pinned by a golden file. Only tests import it.
package viewtest

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
)

// History is the window the store keeps, as the root model's default.
const History = 2 * time.Minute

// Store is a store fed with evs, as the root model folds them (commands'
// answers go to the footer, topologies to the fleet, not the store).
func Store(evs []source.Event) *store.Store {
	s := store.New(store.Config{Keep: History, Columns: plot.StoreColumns()})
	for _, ev := range evs {
		if ev.Kind != source.EventCommand && ev.Kind != source.EventTopology {
			s.Add(ev.Inert())
		}
	}
	return s
}

// Context is a context over s for the given nodes. It pins the colour
// profile first (uitest.Plain), so that the lines it draws are plain text
// and a golden file holds them whatever terminal the tests run under.
func Context(s *store.Store, ids ...source.NodeID) *view.Context {
	uitest.Plain()
	st := plot.Styles(false)
	return &view.Context{Styles: &st, Prog: progress.New(progress.WithDefaultGradient(), progress.WithoutPercentage()),
		Store: s, Nodes: ids}
}

// Golden pins lines, one a line, against the test's golden file
// (regenerate with -update).
func Golden(t *testing.T, lines []string) {
	t.Helper()
	golden.RequireEqual(t, strings.Join(lines, "\n"))
}

// keyTypes are the keys Key makes by name; any other string is typed.
var keyTypes = map[string]tea.KeyType{
	"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "ctrl+c": tea.KeyCtrlC, "esc": tea.KeyEsc,
	"up": tea.KeyUp, "down": tea.KeyDown, "enter": tea.KeyEnter,
}

// Key is a key press by name: "tab", "esc", "up", ..., or the runes typed.
func Key(k string) tea.KeyMsg {
	if kt, ok := keyTypes[k]; ok {
		return tea.KeyMsg{Type: kt}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}
