package panesview

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
)

// frame puts lines in a border width x height cells, one space of padding
// on each side, cutting or padding each line to the inner width, then the
// fixed lines, which are the inner width exactly, and blank lines to the
// height. The top border carries title; the
// bottom one carries axis from column axisAt of the inner width on, so
// that it runs under the plots. Done by hand rather than with a lipgloss
// border: this runs on every redraw and knows its lines are single-line.
func frame(st *style.Styles, lines, fixed []string, width, height int, focused bool, title string, axisAt int, axis string) []string {
	edge, paint := st.Edge, st.Border
	if focused {
		edge, paint = st.EdgeFocus, st.BorderFocus
	}
	iw := max(width-paneChrome, 1)
	left, right := paint.R(edge.Left)+" ", " "+paint.R(edge.Right)
	out := make([]string, 0, height)
	title = text.FitLine(title, max(iw-2, 1))
	tw := ansi.StringWidth(title)
	out = append(out, paint.R(edge.TopLeft+edge.Top)+" "+title+" "+
		paint.R(strings.Repeat(edge.Top, max(iw-tw-1, 0))+edge.TopRight))
	for _, l := range lines[:min(len(lines), max(height-2, 0))] {
		out = append(out, left+text.FitCells(l, iw)+right)
	}
	// The chart lines are iw cells wide by construction: measuring each
	// (braille runes, through a grapheme iterator) would cost more than
	// drawing it.
	for _, l := range fixed[:min(len(fixed), max(height-1-len(out), 0))] {
		out = append(out, left+l+right)
	}
	for len(out) < height-1 {
		out = append(out, left+strings.Repeat(" ", iw)+right)
	}
	aw := ansi.StringWidth(axis)
	if axisAt+aw > iw {
		axis, aw = "", 0
	}
	// The axis's labels in the label colour, its rule as the border.
	var b strings.Builder
	b.WriteString(paint.R(edge.BottomLeft + strings.Repeat(edge.Bottom, 1+axisAt)))
	rule := []rune(axis)
	for i := 0; i < len(rule); {
		j := i
		isRule := rule[i] == '─'
		for j < len(rule) && (rule[j] == '─') == isRule {
			j++
		}
		if isRule {
			b.WriteString(paint.R(strings.Repeat(edge.Bottom, j-i)))
		} else {
			b.WriteString(st.Label.R(string(rule[i:j])))
		}
		i = j
	}
	b.WriteString(paint.R(strings.Repeat(edge.Bottom, iw-axisAt-aw+1) + edge.BottomRight))
	return append(out, b.String())
}
