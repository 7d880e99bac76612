// Package style is how the screen looks: the colours, each meaning's
// paint (a lipgloss style reduced to the escapes around its text), the
// borders, and the ASCII screen (--ascii). Every view draws with one
// Styles, made once by the root model.
package style

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

// Paint is a lipgloss style reduced to the escape sequences around its
// text. Styling a word costs two string joins instead of a full
// Style.Render (which measures, wraps and aligns), and the UI styles a few
// hundred words per redraw. Only for single-line text without padding.
type Paint struct{ pre, suf string }

// PaintOf captures what style puts around a text, under the colour profile
// lipgloss uses now (Ascii under NO_COLOR: no escapes at all).
func PaintOf(style lipgloss.Style) Paint {
	out := style.Render("X")
	i := strings.IndexByte(out, 'X')
	if i < 0 {
		return Paint{}
	}
	return Paint{pre: out[:i], suf: out[i+1:]}
}

// R styles s.
func (p Paint) R(s string) string {
	if p.pre == "" && p.suf == "" || s == "" {
		return s
	}
	return p.pre + s + p.suf
}

// Styles holds every style the UI uses, built once by the root model.
type Styles struct {
	Top, Banner, Paused         Paint
	Addr, Label, Value, Dim     Paint
	OK, Err, Warn, Markers, Gap Paint
	Border, BorderFocus         Paint
	Series                      []Paint // by chart, from the chart table (ui/plot)
	Curves                      []Paint // the cost view's curves
	TooSmall                    lipgloss.Style
	Edge, EdgeFocus             lipgloss.Border
	Head                        Paint // the reports table's heads
	ASCII                       bool  // charts in ASCII (Config.ASCII)
}

// New returns the styles, with a series paint for each of the chart
// table's colours (plot.Colours), in its order.
func New(ascii bool, series ...lipgloss.TerminalColor) Styles {
	fg := func(c lipgloss.TerminalColor) Paint { return PaintOf(lipgloss.NewStyle().Foreground(c)) }
	s := Styles{
		ASCII:       ascii,
		Top:         PaintOf(lipgloss.NewStyle().Bold(true).Foreground(colAccent)),
		Banner:      fg(colText),
		Paused:      PaintOf(lipgloss.NewStyle().Bold(true).Reverse(true)),
		Addr:        PaintOf(lipgloss.NewStyle().Bold(true).Foreground(colText)),
		Label:       fg(colSubtle),
		Value:       fg(colText),
		Dim:         fg(colSubtle),
		OK:          fg(colOK),
		Err:         PaintOf(lipgloss.NewStyle().Bold(true).Foreground(colError)),
		Warn:        fg(colWarn),
		Markers:     fg(colMarkers),
		Gap:         fg(colError),
		Border:      fg(colSubtle),
		BorderFocus: fg(colAccent),
		// The focused pane has a double border: focus shows without colour.
		Edge:      lipgloss.RoundedBorder(),
		EdgeFocus: lipgloss.DoubleBorder(),
		TooSmall:  lipgloss.NewStyle().Bold(true).Foreground(colWarn).Align(lipgloss.Center),
		Head:      PaintOf(lipgloss.NewStyle().Bold(true).Foreground(colText)),
	}
	for _, c := range series {
		s.Series = append(s.Series, fg(c))
	}
	for _, c := range curveColours {
		s.Curves = append(s.Curves, fg(c))
	}
	return s
}
