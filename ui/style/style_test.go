package style

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// TestSixteenColourMeanings: on a 16-colour terminal (termenv's ANSI profile)
// every meaning a colour carries keeps a colour of its own, on a dark
// and a light background: an error is not a warning, a success not a
// plain value, a dimmed hint not a figure. (None of them carries the
// meaning alone: each also has a word or a glyph. The marker row's
// colour carries none: its letters F, L, A, M and x do, and it may share
// the warning's yellow.)
func TestSixteenColourMeanings(t *testing.T) {
	defer lipgloss.SetColorProfile(termenv.Ascii)
	defer lipgloss.SetHasDarkBackground(true)
	lipgloss.SetColorProfile(termenv.ANSI)
	for _, dark := range []bool{true, false} {
		lipgloss.SetHasDarkBackground(dark)
		st := New(false)
		meanings := map[string]Paint{"ok": st.OK, "warning": st.Warn, "error": st.Err, "dimmed": st.Dim,
			"value": st.Value, "title and focus": st.Top}
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
}

func TestASCIIEllipsis(t *testing.T) {
	st := New(false)
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	colour := New(false)
	for _, s := range []*Styles{&st, &colour} {
		in := s.Value.R("connecting…") + " " + s.Dim.R("took 25s") + " " + s.Dim.R("…")
		if got := ansi.Strip(ASCIIFrame(in)); got != "connecting. took 25s >" {
			t.Errorf("%q: %q", in, got)
		}
	}
}
