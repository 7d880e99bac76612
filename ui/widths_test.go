package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/ui/uitest"
)

// midWord finds a word cut inside: "…" right after a letter or digit.
// vkwatch cuts between words (fit.go), so one is a bug; the ellipses
// written on purpose ("connecting…", "sending BGSAVE to ADDR…") are left
// out first.
var (
	midWord   = regexp.MustCompile(`[\p{L}\p{N}%)]…`)
	onPurpose = regexp.MustCompile(`connecting…|(sending [A-Z ]+ to )?\S+:\d+…`)
)

// checkWidth fails t when a line of frame v is wider than w or cuts a
// word inside.
func checkWidth(t *testing.T, what string, v string, w int) {
	t.Helper()
	for i, l := range strings.Split(ansi.Strip(v), "\n") {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("%s: line %d is %d cells wide:\n%s", what, i, n, l)
		}
		if m := midWord.FindString(onPurpose.ReplaceAllString(l, "")); m != "" {
			t.Errorf("%s: line %d cuts a word (%q):\n%s", what, i, m, l)
		}
	}
}

// screenSizes are the sizes the whole screen is pinned at.
var screenSizes = [][2]int{{80, 24}, {120, 40}, {160, 45}, {200, 50}, {250, 60}}

// TestScreenGolden pins the whole screen at each size: two servers after
// a fork save with a forkless one running, then the reports table, the
// cost curves and the full help over it; and the fleet's rows.
func TestScreenGolden(t *testing.T) {
	for _, sz := range screenSizes {
		w, h := sz[0], sz[1]
		m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, w, h, uitest.ReportsScenario(6))
		frames := []string{m.View()}
		for _, k := range []string{"r", "c", "?"} {
			m, _ = press(m, k)
			frames = append(frames, m.View())
		}
		f := feed(t, newFleetModel(w, h, nil), uitest.FleetScenario(60*time.Second))
		frames = append(frames, f.View())
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			golden.RequireEqual(t, strings.Join(frames, "\n"+strings.Repeat("=", w)+"\n"))
		})
	}
}

// TestNoWordCutAtAnyWidth draws every view at every width from 80 to 250
// columns: no line is wider than the terminal, and none cuts a word.
func TestNoWordCutAtAnyWidth(t *testing.T) {
	panes := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB)}, 80, 24, uitest.ReportsScenario(6))
	one := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 80, 24, uitest.Scenario(1, 28*time.Second))
	fleet := feed(t, newFleetModel(80, 24, nil), uitest.FleetScenario(60*time.Second))
	for w := 80; w <= 250; w++ {
		h := 24 + (w-80)*36/170
		for name, m := range map[string]Model{"panes": panes, "one pane, saving": one, "fleet": fleet} {
			m = sized(m, w, h)
			checkWidth(t, fmt.Sprintf("%s %dx%d", name, w, h), m.View(), w)
			for _, k := range []string{"r", "c", "?"} {
				m, _ = press(m, k)
				checkWidth(t, fmt.Sprintf("%s %dx%d after %s", name, w, h, k), m.View(), w)
			}
			for _, k := range []string{"?", "c"} {
				m, _ = press(m, k) // close them again: the models are shared
			}
		}
	}
}
