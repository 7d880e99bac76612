package shot

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/vt"
)

// TestRenderKeepsColours feeds a real terminal emulator text in true
// colour, a 256-colour background, bold and characters XML must escape,
// and checks the picture: valid SVG, each run in its colour, the
// background a rectangle, the text escaped and on its cells.
func TestRenderKeepsColours(t *testing.T) {
	emu := vt.NewEmulator(40, 3)
	emu.SetDefaultBackgroundColor(DefaultBg)
	emu.SetDefaultForegroundColor(DefaultFg)
	go io.Copy(io.Discard, emu) // the emulator's answers, unread here
	emu.WriteString("\x1b[38;2;255;95;95mred\x1b[0m \x1b[1;48;5;21mbold\x1b[0m a&<b>\r\n╔══╗ ⣿ 42%")
	sc := ScreenOf(emu)
	if !strings.HasPrefix(sc.Text, "red bold a&<b>\n╔══╗ ⣿ 42%") {
		t.Fatalf("screen text %q", sc.Text)
	}
	svg := SVG(sc, "vkwatch demo")
	svgHas(t, svg,
		`fill="#ff5f5f">red</text>`,
		`fill="#0000ff"/>`, // index 21's background, behind "bold"
		`font-weight="bold">bold</text>`,
		`>a&amp;&lt;b&gt;</text>`,
		`>vkwatch demo</text>`,
		`x="91.6" y="57.5" textLength="42.0" lengthAdjust="spacingAndGlyphs" fill="#cdd6f4">a&amp;`, // after "red bold ", 5 cells
		// "╔══╗ ⣿ 42%" on row 1: no run stretches spaces beside braille or
		// box drawing, whose fallback font's advance is not a space's.
		`x="16.0" y="75.5" textLength="33.6" lengthAdjust="spacingAndGlyphs" fill="#cdd6f4">╔══╗</text>`,
		`x="58.0" y="75.5" textLength="8.4" lengthAdjust="spacingAndGlyphs" fill="#cdd6f4">⣿</text>`,
		`x="74.8" y="75.5" textLength="25.2" lengthAdjust="spacingAndGlyphs" fill="#cdd6f4">42%</text>`,
	)
	checkSVG(t, "rendered", svg)
}

// TestFromFrame: a frame as bubbletea's View returns it (lines joined by
// newlines, lipgloss's styles) becomes the screen a terminal would show,
// each line at its row's start.
func TestFromFrame(t *testing.T) {
	sc := FromFrame("\x1b[1mvkwatch\x1b[0m 127.0.0.1:6379\nused \x1b[38;2;166;227;161m1.2 GiB\x1b[0m", 30, 4)
	if want := "vkwatch 127.0.0.1:6379\nused 1.2 GiB\n\n"; sc.Text != want {
		t.Fatalf("screen %q, want %q", sc.Text, want)
	}
	svg := SVG(sc, "vkwatch")
	svgHas(t, svg, `font-weight="bold">vkwatch</text>`, `fill="#a6e3a1">1.2 GiB</text>`, `>127.0.0.1:6379</text>`)
	checkSVG(t, "frame", svg)
}

// TestFromFrameAsksNothing: a frame holding queries (cursor position,
// device attributes, the background colour) and controls draws its text
// without blocking on answers nobody reads.
func TestFromFrameAsksNothing(t *testing.T) {
	sc := FromFrame("a\x1b[6nb\x1b[c\x1b]11;?\x07c\x07\x1b[2Jd", 10, 2)
	if want := "abcd\n"; sc.Text != want {
		t.Fatalf("screen %q, want %q", sc.Text, want)
	}
}

// svgHas fails the test for each of wants that svg lacks.
func svgHas(t *testing.T, svg []byte, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %s:\n%s", want, svg)
		}
	}
}

// checkSVG fails the test unless b is a well-formed SVG document.
func checkSVG(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := WellFormed(b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
