// Package shot renders a terminal screen to an SVG picture: each cell's
// background as a rectangle, its text in its colour and weight, the text
// kept as text so the picture is sharp at any size and searchable. It
// draws the README's pictures (cmd/vkshot) and the monitor's S key.
package shot

import (
	"fmt"
	"image/color"
	"regexp"
	"strings"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// Geometry of the picture: a monospace cell of cellW x cellH pixels at
// fontSize, inside a window frame of pad pixels with a title bar.
const (
	fontSize = 14.0
	cellW    = 8.4 // 0.6 em: the advance of common monospace fonts
	cellH    = 18.0
	pad      = 16.0
	titleH   = 28.0
)

// fontFamily lists monospace fonts that have the box-drawing, block and
// braille characters vkwatch draws with; each run of text is also
// stretched to exactly its cells (textLength), so a fallback font with
// other widths still keeps the grid.
const fontFamily = `'DejaVu Sans Mono', 'JetBrains Mono', Menlo, Consolas, 'Liberation Mono', monospace`

// hex is a colour as #rrggbb; nil is the default it stands for.
// Colours of the terminal where a program leaves them at the default: a
// dark theme (Catppuccin Mocha's base and text, as demo.tape uses).
var (
	DefaultBg = color.RGBA{0x1e, 0x1e, 0x2e, 0xff}
	DefaultFg = color.RGBA{0xcd, 0xd6, 0xf4, 0xff}
)

// Screen is one moment of a terminal: its text, line by line, and its
// cells with their colours.
type Screen struct {
	Text  string
	Cols  int
	Rows  int
	Cells [][]uv.Cell
}

// ScreenOf copies an emulator's screen.
func ScreenOf(emu *vt.Emulator) Screen {
	w, h := emu.Width(), emu.Height()
	sc := Screen{Cols: w, Rows: h, Cells: make([][]uv.Cell, h)}
	lines := make([]string, h)
	for y := range h {
		row := make([]uv.Cell, w)
		var b strings.Builder
		for x := range w {
			if c := emu.CellAt(x, y); c != nil {
				row[x] = *c
			}
			switch {
			case row[x].Content == "" && row[x].Width == 0 && x > 0 && row[x-1].Width > 1:
				// the second half of a wide character
			case row[x].Content == "":
				b.WriteByte(' ')
			default:
				b.WriteString(row[x].Content)
			}
		}
		sc.Cells[y] = row
		lines[y] = strings.TrimRight(b.String(), " ")
	}
	sc.Text = strings.Join(lines, "\n")
	return sc
}

// FromFrame is the screen a cols x rows terminal shows after drawing
// frame, a bubbletea View (lines of text with ANSI styles): the same
// emulator the README's pictures come from reads it, so S and vkshot
// draw alike. Only text and SGR styles reach the emulator: no sequence
// left can ask it a question, so nothing needs to read its answers (a
// reader racing its Close is a data race inside vt v0.1.0).
func FromFrame(frame string, cols, rows int) Screen {
	emu := vt.NewEmulator(cols, rows)
	emu.SetDefaultBackgroundColor(DefaultBg)
	emu.SetDefaultForegroundColor(DefaultFg)
	emu.WriteString(strings.ReplaceAll(onlySGR(frame), "\n", "\r\n"))
	return ScreenOf(emu)
}

var (
	sgrRe = regexp.MustCompile(`^\x1b\[[0-9;:]*m`)
	seqRe = regexp.MustCompile(`^\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|.)?`)
)

// onlySGR drops every escape sequence of s but SGR (colours and
// attributes), and every control character but the newline.
func onlySGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			if m := sgrRe.FindString(s[i:]); m != "" {
				b.WriteString(m)
				i += len(m)
				continue
			}
			i += max(len(seqRe.FindString(s[i:])), 1)
		case c < 0x20 && c != '\n', c == 0x7f:
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func hex(c color.Color, def color.Color) string {
	if c == nil {
		c = def
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// look is what a run of cells shares: colours and attributes.
type look struct {
	fg, bg            string
	bold, faint, ital bool
	underline, strike bool
}

func lookOf(c uv.Cell) look {
	st := c.Style
	l := look{
		fg:        hex(st.Fg, DefaultFg),
		bg:        hex(st.Bg, DefaultBg),
		bold:      st.Attrs&uv.AttrBold != 0,
		faint:     st.Attrs&uv.AttrFaint != 0,
		ital:      st.Attrs&uv.AttrItalic != 0,
		strike:    st.Attrs&uv.AttrStrikethrough != 0,
		underline: st.Underline != uv.UnderlineNone,
	}
	if st.Attrs&uv.AttrReverse != 0 {
		l.fg, l.bg = l.bg, l.fg
	}
	return l
}

// span is a stretch of cells of one look on one row.
type span struct {
	x, w int // first cell and width in cells
	text string
	look look
}

// spans cuts a row into spans of one look; a wide character spans its
// cells. A span never mixes spaces with characters beyond ASCII (braille,
// blocks): each span is stretched to its cells as a whole, and a fallback
// font's braille is wider or narrower than a space, so a chart row such as
// "⢸      ⠸⡄" would have its glyphs after the spaces drawn off their cells.
func spans(row []uv.Cell) []span {
	var out []span
	for x := 0; x < len(row); {
		c := row[x]
		w := max(c.Width, 1)
		content := c.Content
		if content == "" {
			content = " "
		}
		l := lookOf(c)
		if n := len(out); n > 0 && out[n-1].look == l && out[n-1].x+out[n-1].w == x && !mixes(out[n-1].text, content) {
			out[n-1].text += content
			out[n-1].w += w
		} else {
			out = append(out, span{x: x, w: w, text: content, look: l})
		}
		x += w
	}
	return out
}

// mixes reports whether appending next to text would put a space beside a
// character beyond ASCII.
func mixes(text, next string) bool {
	last, _ := utf8.DecodeLastRuneInString(text)
	first, _ := utf8.DecodeRuneInString(next)
	return last == ' ' && first >= utf8.RuneSelf || last >= utf8.RuneSelf && first == ' '
}

// escape makes text safe inside an SVG element.
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// SVG draws a screen as an SVG picture: a window with a title, each
// cell's background as a rectangle, its text in its colour and weight.
// The text stays text, so the picture is sharp at any size and its words
// can be searched.
func SVG(sc Screen, title string) []byte {
	width := pad*2 + float64(sc.Cols)*cellW
	height := titleH + pad*2 + float64(sc.Rows)*cellH
	bg := hex(nil, DefaultBg)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" rx="8" fill="%s"/>`+"\n", bg)
	// Title bar: three window buttons and the command.
	for i, c := range []string{"#f38ba8", "#f9e2af", "#a6e3a1"} {
		fmt.Fprintf(&b, `<circle cx="%.0f" cy="%.0f" r="6" fill="%s"/>`, pad+6+float64(i)*20, titleH/2+4, c)
	}
	fmt.Fprintf(&b, "\n"+`<text x="%.1f" y="%.1f" fill="#7f849c" font-family="%s" font-size="%.0f" text-anchor="middle">%s</text>`+"\n",
		width/2, titleH/2+8, fontFamily, fontSize-1, escape.Replace(title))
	top := titleH + pad
	// Backgrounds first, so that no rectangle covers a neighbour's text.
	b.WriteString(`<g shape-rendering="crispEdges">` + "\n")
	for y, row := range sc.Cells {
		for _, r := range spans(row) {
			if r.look.bg == bg {
				continue
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s"/>`+"\n",
				pad+float64(r.x)*cellW, top+float64(y)*cellH, float64(r.w)*cellW, cellH, r.look.bg)
		}
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<g font-family="%s" font-size="%.0f" xml:space="preserve">`+"\n", fontFamily, fontSize)
	for y, row := range sc.Cells {
		baseline := top + float64(y)*cellH + cellH*0.75
		for _, r := range spans(row) {
			if !r.look.underline && !r.look.strike {
				// Spaces draw nothing (backgrounds are drawn above): trim
				// them off, keeping the rest on its cells.
				trimmed := strings.TrimLeft(r.text, " ")
				lead := len(r.text) - len(trimmed)
				r.text = strings.TrimRight(trimmed, " ")
				if r.text == "" {
					continue
				}
				r.x += lead
				r.w -= lead + len(trimmed) - len(r.text) // a space is one cell
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" textLength="%.1f" lengthAdjust="spacingAndGlyphs" fill="%s"%s>%s</text>`+"\n",
				pad+float64(r.x)*cellW, baseline, float64(r.w)*cellW, r.look.fg, attrs(r.look), escape.Replace(r.text))
		}
	}
	b.WriteString("</g>\n</svg>\n")
	return []byte(b.String())
}

// attrs are the SVG attributes of a look beyond its colour.
func attrs(l look) string {
	var a []string
	if l.bold {
		a = append(a, `font-weight="bold"`)
	}
	if l.faint {
		a = append(a, `opacity="0.6"`)
	}
	if l.ital {
		a = append(a, `font-style="italic"`)
	}
	switch {
	case l.underline && l.strike:
		a = append(a, `text-decoration="underline line-through"`)
	case l.underline:
		a = append(a, `text-decoration="underline"`)
	case l.strike:
		a = append(a, `text-decoration="line-through"`)
	}
	if len(a) == 0 {
		return ""
	}
	return " " + strings.Join(a, " ")
}
