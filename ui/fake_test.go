package ui

import (
	"os"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
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

// keyTypes are the keys press sends by name; any other string is typed.
var keyTypes = map[string]tea.KeyType{
	"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "ctrl+c": tea.KeyCtrlC, "esc": tea.KeyEsc,
	"up": tea.KeyUp, "down": tea.KeyDown, "enter": tea.KeyEnter,
}

// press returns m after a key press, and the command it returned.
func press(m Model, k string) (Model, tea.Cmd) {
	msg := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	if kt, ok := keyTypes[k]; ok {
		msg = tea.KeyMsg{Type: kt}
	}
	nm, cmd := m.Update(msg)
	return nm.(Model), cmd
}

func newTestModel(servers ...string) Model {
	return New(Config{Nodes: nodes(servers...), Now: uitest.FixedNow, Send: func(source.NodeID, ...string) {}})
}
