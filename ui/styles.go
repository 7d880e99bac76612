package ui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Colours are adaptive (light and dark terminals). None of them carries
// meaning on its own: every state also has a word or a glyph (double border
// for focus, "✗" for errors, letters on the marker row, "PAUSED"), so the UI
// reads the same under NO_COLOR or an Ascii profile.
var (
	colSubtle  = lipgloss.AdaptiveColor{Light: "#8A8A8A", Dark: "#6C6C6C"}
	colText    = lipgloss.AdaptiveColor{Light: "#1C1C1C", Dark: "#E4E4E4"}
	colAccent  = lipgloss.AdaptiveColor{Light: "#5F00D7", Dark: "#AF87FF"}
	colError   = lipgloss.AdaptiveColor{Light: "#D70000", Dark: "#FF5F5F"}
	colOK      = lipgloss.AdaptiveColor{Light: "#008700", Dark: "#87D787"}
	colWarn    = lipgloss.AdaptiveColor{Light: "#AF8700", Dark: "#FFAF00"} // light: olive in 16 colours, not the error's red
	colMarkers = lipgloss.AdaptiveColor{Light: "#AF8700", Dark: "#FFD75F"}
)

// curveColours tell the cost view's curves apart where colour shows; the
// digit at each curve's end does where it does not.
var curveColours = []lipgloss.AdaptiveColor{
	{Light: "#005FAF", Dark: "#5FAFFF"},
	{Light: "#AF0000", Dark: "#FF5F87"},
	{Light: "#008700", Dark: "#87D75F"},
	{Light: "#AF5F00", Dark: "#FFAF5F"},
	{Light: "#5F00D7", Dark: "#AF87FF"},
	{Light: "#008787", Dark: "#5FD7D7"},
	{Light: "#AF0087", Dark: "#FF87D7"},
	{Light: "#878700", Dark: "#D7D75F"},
}

// paint is a lipgloss style reduced to the escape sequences around its
// text. Styling a word costs two string joins instead of a full
// Style.Render (which measures, wraps and aligns), and the UI styles a few
// hundred words per redraw. Only for single-line text without padding.
type paint struct{ pre, suf string }

// paintOf captures what style puts around a text, under the colour profile
// lipgloss uses now (Ascii under NO_COLOR: no escapes at all).
func paintOf(style lipgloss.Style) paint {
	out := style.Render("X")
	i := strings.IndexByte(out, 'X')
	if i < 0 {
		return paint{}
	}
	return paint{pre: out[:i], suf: out[i+1:]}
}

// r styles s.
func (p paint) r(s string) string {
	if p.pre == "" && p.suf == "" || s == "" {
		return s
	}
	return p.pre + s + p.suf
}

// styles holds every style the UI uses, built once in New.
type styles struct {
	top, banner, paused         paint
	addr, label, value, dim     paint
	ok, err, warn, markers, gap paint
	border, borderFocus         paint
	series                      []paint // by metric, from the metric table
	curves                      []paint // the cost view's curves
	tooSmall                    lipgloss.Style
	edge, edgeFocus             lipgloss.Border
	head                        paint // the reports table's heads
	ascii                       bool  // charts in ASCII (Config.ASCII)
}

func newStyles(ascii bool) styles {
	fg := func(c lipgloss.TerminalColor) paint { return paintOf(lipgloss.NewStyle().Foreground(c)) }
	s := styles{
		ascii:       ascii,
		top:         paintOf(lipgloss.NewStyle().Bold(true).Foreground(colAccent)),
		banner:      fg(colText),
		paused:      paintOf(lipgloss.NewStyle().Bold(true).Reverse(true)),
		addr:        paintOf(lipgloss.NewStyle().Bold(true).Foreground(colText)),
		label:       fg(colSubtle),
		value:       fg(colText),
		dim:         fg(colSubtle),
		ok:          fg(colOK),
		err:         paintOf(lipgloss.NewStyle().Bold(true).Foreground(colError)),
		warn:        fg(colWarn),
		markers:     fg(colMarkers),
		gap:         fg(colError),
		border:      fg(colSubtle),
		borderFocus: fg(colAccent),
		// The focused pane has a double border: focus shows without colour.
		edge:      lipgloss.RoundedBorder(),
		edgeFocus: lipgloss.DoubleBorder(),
		tooSmall:  lipgloss.NewStyle().Bold(true).Foreground(colWarn).Align(lipgloss.Center),
		head:      paintOf(lipgloss.NewStyle().Bold(true).Foreground(colText)),
	}
	for _, mt := range metrics {
		s.series = append(s.series, fg(mt.color))
	}
	for _, c := range curveColours {
		s.curves = append(s.curves, fg(c))
	}
	return s
}
