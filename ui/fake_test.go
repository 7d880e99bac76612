package ui

import (
	"os"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

// TestMain pins the colour profile and background so goldens hold plain
// text whatever terminal or NO_COLOR setting the tests run under.
func TestMain(m *testing.M) {
	uitest.Plain()
	os.Exit(m.Run())
}

// feed sends the events to m in batches, as the wiring coalesces them.
func feed(t testing.TB, m Model, evs []source.Event) Model {
	t.Helper()
	const batch = 10
	for i := 0; i < len(evs); i += batch {
		j := min(i+batch, len(evs))
		nm, _ := m.Update(EventsMsg(evs[i:j]))
		m = nm.(Model)
	}
	return m
}

// sized returns m after a window-size message.
func sized(m Model, w, h int) Model {
	nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return nm.(Model)
}

// press returns m after a key press, and the command it returned.
func press(m Model, k string) (Model, tea.Cmd) {
	nm, cmd := m.Update(viewtest.Key(k))
	return nm.(Model), cmd
}

func newTestModel(servers ...string) Model {
	return New(Config{Nodes: nodes(servers...), Now: uitest.FixedNow, Send: func(source.NodeID, ...string) {}})
}
