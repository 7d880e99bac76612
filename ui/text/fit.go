// Package text is how the screen writes figures and fits lines: every
// absent value reads n/a, sizes, rates, latencies and spans in the
// house's units (source/units), and a line too long for its cells loses
// whole words from its end, never part of one.
package text

import (
	"strings"
	"unicode"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Text that fits its cells. A line too long for the terminal loses whole
// words from its end, never part of one: "took 15s server" rather than
// "took 15s ser…". The separator left dangling goes with them, and a
// number goes with its unit ("cow 12.3" without "MiB" would read as
// bytes); " …" then says that something was cut. Only one word wider than
// the room it has (a long address in a narrow column) is cut inside,
// with "…" right after it.

// PadRight pads s (which may hold escapes) with spaces to width cells.
func PadRight(s string, width int) string {
	if n := lipgloss.Width(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// FitRight right-aligns s in width cells, cutting it when longer.
func FitRight(s string, width int) string {
	s, n := cut(s, lipgloss.Width(s), width)
	return strings.Repeat(" ", max(width-n, 0)) + s
}

// FitCells cuts s to w cells, or pads it with spaces to exactly w; a
// line of one row. It measures s once, and again only after a cut.
func FitCells(s string, w int) string {
	if w <= 0 {
		return ""
	}
	s, n := cut(s, ansi.StringWidth(s), w)
	return s + strings.Repeat(" ", w-n)
}

// FitLines cuts every line to width cells.
func FitLines(width int, lines ...string) []string {
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > width {
			lines[i], _ = cut(l, n, width)
		}
	}
	return lines
}

// FitLine cuts one line to width cells.
func FitLine(s string, width int) string {
	s, _ = cut(s, ansi.StringWidth(s), width)
	return s
}

// cut cuts s, n cells wide, to at most w cells between words (see the
// top of this file), and says how wide it is then: a wide character at a
// cut inside a word leaves it a cell short of w, which a caller padding
// to w must count.
func cut(s string, n, w int) (string, int) {
	if n <= w {
		return s, n
	}
	if w <= 2 {
		s = ansi.Truncate(s, max(w, 0), "…")
		return s, ansi.StringWidth(s)
	}
	if k := wordCut([]rune(ansi.Strip(s)), w-2); k > 0 {
		return ansi.Truncate(s, k, "") + " …", k + 2
	}
	s = ansi.Truncate(s, w, "…")
	return s, ansi.StringWidth(s)
}

// unitWords are the words that belong to the number before them.
var unitWords = map[string]bool{"B": true, "KiB": true, "MiB": true, "GiB": true, "TiB": true, "PiB": true}

// wordCut is how many cells of plain to keep so that they end with a
// whole word within room cells, without a dangling separator or a number
// whose unit was cut; 0 when not even one word fits.
func wordCut(plain []rune, room int) int {
	// The cells before each rune, up to the first past room.
	cells := make([]int, 0, len(plain)+1)
	w := 0
	for _, r := range plain {
		cells = append(cells, w)
		if w > room {
			break
		}
		w += ansi.StringWidth(string(r))
	}
	cells = append(cells, w)
	end := len(cells) - 1 // runes measured
	// The last space at which what comes before fits, and the word after
	// it was cut (a space just past the room ends a whole word too).
	i := -1
	for j := min(end, len(plain)-1); j > 0; j-- {
		if plain[j] == ' ' && cells[j] <= room {
			i = j
			break
		}
	}
	dropping := false // a label is going, whose figure was cut
	for i > 0 {
		// Drop what dangles: separators, a number whose unit was cut, a
		// label (its words up to a separator) whose figure was.
		k, sep := i, false
		for k > 0 && strings.ContainsRune(" ·•│,;:(→/=+-", plain[k-1]) {
			sep = sep || plain[k-1] != ' '
			k--
		}
		start := k
		for start > 0 && plain[start-1] != ' ' {
			start--
		}
		next := nextWord(plain, i)
		switch word := plain[start:k]; {
		case k > 0 && numeric(word) && unitWords[next]:
			i = start - 1
		case k > 0 && !sep && letters(word) && !unitWords[string(word)] && (dropping || figure(next)):
			i, dropping = start-1, true
		default:
			return cells[k]
		}
	}
	return 0
}

// letters reports whether a word is letters only: a label.
func letters(word []rune) bool {
	for _, r := range word {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return len(word) > 0
}

// numeric reports whether a word is a figure: "12.3", "+3.1", "~15",
// "25s", "2.10ms", "98%": a digit first, or after a sign.
func numeric(word []rune) bool {
	for len(word) > 0 && strings.ContainsRune("+-~(", word[0]) {
		word = word[1:]
	}
	return len(word) > 0 && unicode.IsDigit(word[0])
}

// figure reports whether the word after a label is its figure: a
// number, not a parenthesis that says more ("ok (176 MiB of ...)").
func figure(word string) bool { return !strings.HasPrefix(word, "(") && numeric([]rune(word)) }

// nextWord is the word that starts after the space at i.
func nextWord(plain []rune, i int) string {
	j := i + 1
	for j < len(plain) && plain[j] != ' ' {
		j++
	}
	return strings.TrimRight(string(plain[i+1:j]), ")")
}

// Part is a piece of a line that FitParts may leave out: the higher its
// Rank, the sooner (0: never).
type Part struct {
	Text string
	Rank int
}

// FitParts joins parts with sep, leaving out the highest ranks first
// until the line fits width (the order stays); what is left is cut
// between words if it still does not fit.
func FitParts(width int, sep string, parts ...Part) string {
	top := 0
	for _, p := range parts {
		top = max(top, p.Rank)
	}
	var b strings.Builder
	for r := top; ; r-- {
		b.Reset()
		for _, p := range parts {
			if p.Rank <= r && p.Text != "" {
				if b.Len() > 0 {
					b.WriteString(sep)
				}
				b.WriteString(p.Text)
			}
		}
		if n := ansi.StringWidth(b.String()); n <= width || r == 0 {
			s, _ := cut(b.String(), n, width)
			return s
		}
	}
}
