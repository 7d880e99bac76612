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
)

// TestASCIIFrames: with Config.ASCII every frame, of every view at every
// size the screen is pinned at, is ASCII only: no braille (U+2800 to
// U+28FF), no block or box-drawing rune, nothing a non-UTF-8 terminal
// would garble; and its states still read.
func TestASCIIFrames(t *testing.T) {
	for _, sz := range screenSizes {
		w, h := sz[0], sz[1]
		m := setup(t, Config{Nodes: nodes(addrA, addrB), ASCII: true}, w, h, reportsScenario(6))
		top := fleetTopo()
		f := feed(t, sized(New(Config{Nodes: fleetNodes(), Topology: &top, Now: fixedNow, ASCII: true}), w, h), fleetScenario(60*time.Second))
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
	m := setup(t, Config{Nodes: nodes(addrA, addrB), ASCII: true}, 120, 40, reportsScenario(6))
	golden.RequireEqual(t, m.View())
}

// TestSixteenColours: on a 16-colour terminal (termenv's ANSI profile)
// every meaning a colour carries keeps a colour of its own, on a dark
// and a light background: an error is not a warning, a success not a
// plain value, a dimmed hint not a figure. (None of them carries the
// meaning alone: each also has a word or a glyph. The marker row's
// colour carries none: its letters F, L, A, M and x do, and it may share
// the warning's yellow.)
func TestSixteenColours(t *testing.T) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	defer lipgloss.SetHasDarkBackground(true)
	lipgloss.SetColorProfile(termenv.ANSI)
	for _, dark := range []bool{true, false} {
		lipgloss.SetHasDarkBackground(dark)
		st := newStyles(false)
		meanings := map[string]paint{"ok": st.ok, "warning": st.warn, "error": st.err, "dimmed": st.dim,
			"value": st.value, "title and focus": st.top}
		seen := map[string]string{}
		for name, p := range meanings {
			sgr := strings.TrimPrefix(strings.TrimPrefix(p.pre, "\x1b["), "1;") // bold is not a colour
			if p.pre == "" {
				t.Errorf("dark %v: %s has no colour in 16 colours", dark, name)
			}
			if other, ok := seen[sgr]; ok {
				t.Errorf("dark %v: %s and %s share one colour in 16 colours (%q)", dark, name, other, p.pre)
			}
			seen[sgr] = name
		}
	}
	lipgloss.SetHasDarkBackground(true)
	m := setup(t, Config{Nodes: nodes(addrA, addrB)}, 120, 40, reportsScenario(6))
	golden.RequireEqual(t, m.View())
}

func TestASCIIEllipsis(t *testing.T) {
	st := newStyles(false)
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	colour := newStyles(false)
	for _, s := range []*styles{&st, &colour} {
		in := s.value.r("connecting…") + " " + s.dim.r("took 25s") + " " + s.dim.r("…")
		if got := ansi.Strip(asciiFrame(in)); got != "connecting. took 25s >" {
			t.Errorf("%q: %q", in, got)
		}
	}
}
