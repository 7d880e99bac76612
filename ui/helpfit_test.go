package ui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestFullHelpFits80x24: ? at 80x24 lists every key, each whole, none
// cut: the columns that do not fit side by side are stacked.
func TestFullHelpFits80x24(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 80, 24, uitest.Scenario(2, 60e9))
	m, _ = press(m, "tab") // the Valkey 9.2 pane: x is offered there
	m, _ = press(m, "?")
	v := plainView(m)
	lines := strings.Split(v, "\n")
	help := strings.Join(lines[len(lines)-m.lay.helpH:], "\n")
	if !m.lay.fullHelp {
		t.Fatalf("the full help not shown at 80x24:\n%s", v)
	}
	for _, k := range [][2]string{
		{"b", "bgsave"}, {"a", "bgrewriteaof"}, {"B", "bgsave both"}, {"A", "bgrewriteaof both"}, {"x", "cancel save"},
		{"tab", "next pane"}, {"shift+tab", "previous pane"}, {"c", "cost"}, {"r", "reports"},
		{"s", "scales"}, {"esc", "close"}, {"p", "pause"}, {"S", "screen to SVG"}, {"?", "less"}, {"q", "quit"},
		{"ctrl+c", "quit now, exit 130"},
	} {
		if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(k[0]) + ` +` + regexp.QuoteMeta(k[1]) + `(\s|$)`).MatchString(help) {
			t.Errorf("the full help at 80x24 lacks %s %q:\n%s", k[0], k[1], help)
		}
	}
	if strings.Contains(help, "…") {
		t.Errorf("the full help at 80x24 cut:\n%s", help)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line of %d cells at 80x24: %q", w, l)
		}
	}
}

// TestTitleKeepsItsHint: where the title line is short of room, the
// banner is cut, never what to press.
func TestTitleKeepsItsHint(t *testing.T) {
	cfg := Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Banner: "demo: redis-server 7.0.15 has no forkless save: left idle, right under 8 writers",
		Hint: "press B to save both"}
	for _, c := range []struct {
		w    int
		keys []string
	}{{80, nil}, {100, nil}, {200, nil}, {80, []string{"?"}}} {
		w := c.w
		m := setup(t, cfg, w, 24, uitest.Scenario(2, 10e9))
		for _, k := range c.keys {
			m, _ = press(m, k) // the full help: one pane shows, and says so
		}
		top := strings.Split(plainView(m), "\n")[0]
		if !strings.Contains(top, "vkwatch · demo") || !strings.Contains(top, " — press B to save both") || !strings.Contains(top, "scales shared") {
			t.Errorf("%d columns: the title line %q", w, top)
		}
		if ansi.StringWidth(top) > w {
			t.Errorf("%d columns: the title line is %d cells", w, ansi.StringWidth(top))
		}
	}
}
