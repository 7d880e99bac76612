package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestASCIIFrames: with Config.ASCII every frame, of every view at every
// size the screen is pinned at, is ASCII only: no braille (U+2800 to
// U+28FF), no block or box-drawing rune, nothing a non-UTF-8 terminal
// would garble; and its states still read.
func TestASCIIFrames(t *testing.T) {
	for _, sz := range screenSizes {
		w, h := sz[0], sz[1]
		m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), ASCII: true}, w, h, uitest.ReportsScenario(6))
		top := uitest.FleetTopo()
		f := feed(t, sized(New(Config{Nodes: fleetNodes(), Topology: &top, Now: uitest.FixedNow, ASCII: true}), w, h), uitest.FleetScenario(60*time.Second))
		frames := map[string]string{"panes": m.View(), "fleet": f.View()}
		for _, k := range []string{"r", "c", "?"} {
			m, _ = press(m, k)
			frames["panes after "+k] = m.View()
		}
		f, _ = press(f, "?")
		frames["fleet after ?"] = f.View()
		for name, v := range frames {
			for i, r := range ansi.Strip(v) {
				if r >= 0x80 {
					t.Errorf("%dx%d %s: %q (U+%04X) at byte %d is not ASCII:\n%s", w, h, name, r, r, i, ansi.Strip(v))
					break
				}
			}
			checkWidth(t, fmt.Sprintf("ascii %dx%d %s", w, h, name), v, w)
		}
		// The states still read: which pane has focus, a save running,
		// its progress bar, the charts, a save's marks.
		v := ansi.Strip(frames["panes"])
		for _, want := range []string{"+= 127.0.0.1:7001", "+- 127.0.0.1:7002", "> BGSAVE forkless", "####", "F---"} {
			if !strings.Contains(v, want) {
				t.Errorf("%dx%d: the ASCII screen lacks %q:\n%s", w, h, want, v)
			}
		}
	}
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), ASCII: true}, 120, 40, uitest.ReportsScenario(6))
	golden.RequireEqual(t, m.View())
}

// TestSixteenColours pins a frame on a 16-colour terminal (termenv's
// ANSI profile); that every meaning keeps a colour of its own there is
// style's TestSixteenColourMeanings.
func TestSixteenColours(t *testing.T) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	lipgloss.SetColorProfile(termenv.ANSI)
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 120, 40, uitest.ReportsScenario(6))
	golden.RequireEqual(t, m.View())
}
