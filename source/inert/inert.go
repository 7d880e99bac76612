// Package inert is where text from outside vkwatch becomes displayable.
//
// Everything a watched server, a cluster peer, a recording or a file says is
// untrusted: a replica's announced address, an error reply or a recording's
// header may hold escape sequences that would retitle, clear or repaint the
// operator's terminal (or, through OSC 52, write its clipboard). Text turns
// every C0 control, DEL, C1 control (U+0080-U+009F, which some terminals
// read as the one-code-point CSI and OSC), bidirectional override and byte
// of invalid UTF-8 into a visible escape such as `\x1b`, and cuts over-long
// text to a bound before it reaches a layout. Its output is valid UTF-8 and
// holds none of those code points, so vkwatch's own styling stays the only
// escape sequences it writes.
//
// Text returns clean text unchanged and without allocating: it runs on
// every string of every frame. Recordings keep the server's exact text
// (JSON escapes it); it is made inert when shown. CSV neutralises a cell a
// spreadsheet would run as a formula.
//
// The package imports nothing of vkwatch, so every other package may use it.
package inert

import (
	"strings"
	"unicode/utf8"
)

// Max is the most bytes Text returns: longer text is cut (at a code point,
// after escaping) and ends with "…". No server string vkwatch shows needs
// more (error replies, addresses, versions are far shorter); the bound keeps
// a hostile megabyte out of every frame's width arithmetic.
const Max = 512

// ellipsis marks text that was cut.
const ellipsis = "…"

// Text returns s made displayable on one line: controls (newlines and tabs
// too), DEL, C1 controls, bidirectional controls and invalid UTF-8 written
// out as escapes (`\n`, `\t`, `\r`, `\x1b`, `\u009b`, `\xff`), cut to Max
// bytes. A backslash stays as it is: the output is for eyes, not for
// parsing back.
func Text(s string) string { return clean(s, Max) }

// Lines is Text for a message of several lines (an error printed at exit):
// newlines stay, each line is made inert and cut to Max, and at most
// MaxLines lines are kept.
func Lines(s string) string {
	if strings.IndexByte(s, '\n') < 0 {
		return Text(s)
	}
	lines := strings.Split(s, "\n")
	changed := false
	if len(lines) > MaxLines {
		lines = append(lines[:MaxLines-1:MaxLines-1], ellipsis)
		changed = true
	}
	for i, l := range lines {
		if c := Text(l); c != l {
			lines[i], changed = c, true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// MaxLines is how many lines Lines keeps.
const MaxLines = 64

// Cut is Text with a bound of n bytes instead of Max (n below the length of
// the ellipsis leaves room for it alone).
func Cut(s string, n int) string { return clean(s, n) }

// Clean reports whether Text(s) == s: s holds nothing to escape and fits Max.
func Clean(s string) bool { return len(s) <= Max && firstUnsafe(s) < 0 }

// clean is Text with a bound of limit bytes.
func clean(s string, limit int) string {
	i := firstUnsafe(s)
	if i < 0 && len(s) <= limit {
		return s // the fast path: no allocation
	}
	if i < 0 {
		i = len(s)
	}
	// The clean prefix is copied as it is, short of where an ellipsis
	// might have to go; the loop takes the rest piece by piece (a code
	// point or its escape), so a cut never splits either.
	if room := limit - len(ellipsis); i > room {
		i = max(room, 0)
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
	}
	var b strings.Builder
	b.Grow(min(len(s), limit) + 8)
	b.WriteString(s[:i])
	mark := -1 // where the output is cut if the rest does not fit
	var buf [8]byte
	for i < len(s) {
		piece, n := s[i:i+1], 1
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				piece = escByte(buf[:0], c)
			}
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			piece, n = s[i:i+size], size
			if r == utf8.RuneError && size == 1 {
				piece = hexByte(buf[:0], c)
			} else if unsafeRune(r) {
				piece = escRune(buf[:0], r)
			}
		}
		if mark < 0 && b.Len()+len(piece) > limit-len(ellipsis) {
			mark = b.Len()
		}
		if b.Len()+len(piece) > limit {
			return b.String()[:mark] + ellipsis
		}
		b.WriteString(piece)
		i += n
	}
	return b.String()
}

// firstUnsafe is the index of the first byte of s that Text would change,
// or -1. ASCII is checked a byte at a time; only other code points are
// decoded.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafeRune(r) {
			return i
		}
		i += size
	}
	return -1
}

// unsafeRune reports a non-ASCII code point Text escapes: the C1 controls
// (U+0080-U+009F: 8-bit CSI, OSC, DCS...), the bidirectional controls that
// reorder what is shown (Trojan Source), and the line and paragraph
// separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

func escByte(b []byte, c byte) string {
	switch c {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	return hexByte(b, c)
}

func hexByte(b []byte, c byte) string {
	b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
	return string(b)
}

func escRune(b []byte, r rune) string {
	b = append(b, '\\', 'u')
	for shift := 12; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[(r>>uint(shift))&0xf])
	}
	return string(b)
}

// CSV returns a spreadsheet cell for s: one that begins with =, +, -, @, a
// tab or a carriage return is prefixed with ' so that a spreadsheet shows
// it as text instead of running it as a formula (OWASP's advice for CSV
// injection). The rest of the text is kept exactly; quoting is the CSV
// writer's job. Use it on text cells only: a negative number in a numeric
// column must stay a number.
func CSV(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// JSON returns JSON text (as encoding/json writes it: valid UTF-8) with the
// code points Text escapes and encoding/json leaves raw (the C1 controls
// and the bidirectional controls) written as \u escapes instead. The data
// is the same, to the byte, once decoded; the text is safe to print. JSON
// holds non-ASCII only inside strings, so every such code point can be
// escaped where it stands. Clean input comes back as it is.
func JSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if unsafeRune(r) && r != utf8.RuneError {
			if out == nil {
				out = make([]byte, 0, len(b)+16)
			}
			out = append(out, b[last:i]...)
			out = append(out, escRune(nil, r)...)
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
