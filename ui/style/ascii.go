package style

import "strings"

// The ASCII screen (Config.ASCII, vkwatch --ascii): for terminals and
// fonts that cannot show braille, or anything but ASCII (TERM=dumb, a
// non-UTF-8 locale, some web terminals and screen readers). The charts
// draw themselves in ASCII (ui/chart's ascii.go); every other rune of a
// frame is turned into one ASCII rune of the same width here, so that
// every state still reads: the focused pane's border is = where the
// others' is -, a running save > where it was ▶, an error x where it was
// ✗, a word cut > where it was …; what no rune here stands for becomes ?.

// asciiRunes are the frame's runes and their ASCII stand-ins.
var asciiRunes = map[rune]rune{
	'─': '-', '━': '=', '═': '=', '│': '|', '║': '|', '▏': '|',
	'╭': '+', '╮': '+', '╰': '+', '╯': '+', '╔': '+', '╗': '+', '╚': '+', '╝': '+',
	'┬': '+', '┴': '+', '├': '+', '┤': '+', '┼': '+', '└': '+', '┌': '+', '┐': '+', '┘': '+',
	'·': '|', '•': '|', '–': '-', '→': '>', '←': '<', '↑': '^', '↓': 'v', '▼': 'v',
	'▶': '>', '▸': '>', '✗': 'x', '×': 'x', '⚠': '!', 'µ': 'u',
	'█': '#', '░': '.', '…': '>',
}

// ASCIIFrame is frame in ASCII, each rune one of the same width (a wide
// rune, which a server's text could hold, becomes a narrower ?: the line
// only gets shorter). An ellipsis right after a word ("connecting…", an
// address cut inside) is a full stop; after a space, where vkwatch cut
// whole words off, it is >: more beyond the edge.
func ASCIIFrame(frame string) string {
	var b strings.Builder
	b.Grow(len(frame))
	prev, esc := ' ', false
	for _, r := range frame {
		switch {
		case esc:
			// An escape sequence (colours) is ASCII, and no text: what
			// came before it is the rune before an ellipsis.
			esc = !(r >= 0x40 && r <= 0x7e && r != '[')
			b.WriteRune(r)
			continue
		case r == 0x1b:
			esc = true
			b.WriteRune(r)
			continue
		case r < 0x80:
		case r == '…' && prev != ' ':
			r = '.'
		default:
			if a, ok := asciiRunes[r]; ok {
				r = a
			} else {
				r = '?'
			}
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}
