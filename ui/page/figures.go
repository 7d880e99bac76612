package page

import (
	"bytes"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	src "github.com/vkwatch/vkwatch/source/report"
)

func init() {
	// gonum/plot's default face is Liberation Serif; sans reads better
	// small and on paper. Its SVG names the family without a fallback,
	// which inlineSVG adds.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// Figure sizes, in points. Two figures sit side by side: on a 1400 px
// screen each is drawn about 1.3 times this size, on A4 landscape about
// once, so textSize prints at about 8 pt.
const (
	figW      = 400
	figH      = 160
	costH     = 200
	pngDPI    = 144 // PNG for a post: sharp on a high-density screen
	buckets   = 500 // columns a figure's data area can show, about
	costCells = 300
)

// The figures' one text size, points: ticks, axis titles, keys and save
// labels alike. The page's CSS sets its small text to about the size a
// figure shows this at.
const textSize = 8

// rowH is the height of a row of keys or save labels above a figure's
// data area.
const rowH = textSize + 5

// The colours: Okabe and Ito's palette, told apart by colour-blind
// readers. A server has one colour in every figure and table; its lines
// differ by their dashes, which a grey printer keeps.
var (
	serverColours = []color.RGBA{
		{0x00, 0x72, 0xB2, 255}, // blue
		{0xD5, 0x5E, 0x00, 255}, // vermillion
		{0x00, 0x9E, 0x73, 255}, // green
		{0xCC, 0x79, 0xA7, 255}, // purple
		{0xE6, 0x9F, 0x00, 255}, // orange
		{0x56, 0xB4, 0xE9, 255}, // sky
		{0x00, 0x00, 0x00, 255}, // black
	}
	// A save's span: light grey on screen and paper, whatever its kind
	// (its label says the kind). NRGBA, so the PNG and the SVG agree.
	spanFill = color.NRGBA{0x80, 0x80, 0x80, 0x30}
	inkText  = color.RGBA{0x33, 0x33, 0x33, 255}
	inkFaint = color.RGBA{0x77, 0x77, 0x77, 255}
)

// Line styles of a server's lines, in its colour.
var (
	solid  = lineStyle{width: 1.3}
	dashed = lineStyle{width: 1, dashes: []vg.Length{4, 2}}
	dotted = lineStyle{width: 1.2, dashes: []vg.Length{1, 1.8}}
)

type lineStyle struct {
	width  vg.Length
	dashes []vg.Length
}

func (l lineStyle) in(c color.Color) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: l.width, Dashes: l.dashes}
}

func serverColour(i int) color.RGBA { return serverColours[i%len(serverColours)] }

func textStyle(c color.Color) draw.TextStyle {
	return draw.TextStyle{Color: c, Font: font.From(plot.DefaultFont, textSize), Handler: plot.DefaultTextHandler}
}

// Figure is one drawn figure: a gonum plot, and above its data area a row
// of keys (what each line is) and a row of save labels, so that neither
// covers a line.
type Figure struct {
	Name    string // file name stem for --figures
	Caption string // on the page, above the figure
	Colour  string // the caption's colour (#rrggbb): its server's, or ""
	plot    *plot.Plot
	w, h    vg.Length
	keys    []key
	spans   *spans

	svgBytes []byte // SVG, once rendered
}

// key is an entry of a figure's keys: a line or a mark and what it is.
type key struct {
	label string
	line  *draw.LineStyle
	glyph *draw.GlyphStyle
}

func lineKey(label string, l draw.LineStyle) key { return key{label: label, line: &l} }

// draw draws the figure on c: the keys' rows at the top, the save labels'
// row just above the data area, the plot below them.
func (f *Figure) draw(c draw.Canvas) {
	rows, pc := f.layout(c)
	f.plot.Draw(pc)
	dc := f.plot.DataCanvas(pc)
	y := c.Max.Y
	sty := textStyle(inkText)
	for _, row := range rows {
		y -= rowH
		x := dc.Min.X
		for _, k := range row {
			k.drawThumb(c, x, y+textSize/2-1)
			c.FillText(sty, vg.Point{X: x + 16, Y: y + 1}, k.label)
			x += k.width(sty) + 12
		}
	}
	if f.spans != nil {
		f.spans.label(c, dc, f.plot)
	}
}

// layout is the rows of keys of a figure drawn on c, and the canvas left
// below them and the save labels for the plot.
func (f *Figure) layout(c draw.Canvas) ([][]key, draw.Canvas) {
	rows := f.keyRows(c.Max.X - c.Min.X)
	band := vg.Length(len(rows)) * rowH
	if f.spans != nil && len(f.spans.saves) > 0 {
		band += rowH
	}
	pc := c
	pc.Max.Y -= band
	return rows, pc
}

func (k key) width(sty draw.TextStyle) vg.Length { return 16 + sty.Width(k.label) }

func (k key) drawThumb(c draw.Canvas, x, y vg.Length) {
	if k.line != nil {
		c.StrokeLine2(*k.line, x, y, x+13, y)
	}
	if k.glyph != nil {
		c.DrawGlyph(*k.glyph, vg.Point{X: x + 6.5, Y: y})
	}
}

// keyRows lays the keys out in rows across width, left to right.
func (f *Figure) keyRows(width vg.Length) [][]key {
	sty := textStyle(inkText)
	var rows [][]key
	var used vg.Length
	for _, k := range f.keys {
		w := k.width(sty) + 12
		if len(rows) == 0 || used+w > width-50 {
			rows, used = append(rows, nil), 40 // the Y axis's room, about
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], k)
		used += w
	}
	return rows
}

// SVG renders the figure as a standalone SVG document.
func (f *Figure) SVG() ([]byte, error) {
	c := vgsvg.New(f.w, f.h)
	f.draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return withFontFallback(b.Bytes()), nil
}

// PNG renders the figure as a PNG image.
func (f *Figure) PNG() ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(c))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// withFontFallback lets a reader without Liberation Sans see a sans face.
func withFontFallback(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"),
		[]byte("font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"))
}

// inlineSVG makes a standalone SVG fit for a page: no XML prolog, and a
// width that follows the page's column (the viewBox keeps the aspect).
func inlineSVG(svg []byte) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	// The first width/height pair is the root's.
	if i := strings.Index(s, `width="`); i >= 0 {
		if j := strings.Index(s[i:], `viewBox=`); j >= 0 {
			s = s[:i] + `role="img" class="fig" ` + s[i+j:]
		}
	}
	return s
}

// newPlot is a plot with the house's look: no title (the page captions
// it), axis titles that name the unit, one text size, a light grid.
func newPlot(xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = textSize
		a.Label.TextStyle.Color = inkText
		a.Tick.Label.Font.Size = textSize
		a.Tick.Label.Color = inkText
		a.Color, a.Tick.Color = inkFaint, inkFaint
		a.Padding = 2
	}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{0xe4}
	g.Horizontal.Color = color.Gray{0xe4}
	p.Add(g)
	return p
}

// addLine adds a line of segments to p; a lone point between gaps is a
// dot, since a line needs two.
func addLine(p *plot.Plot, segs [][]src.Point, l draw.LineStyle) {
	for _, seg := range segs {
		xys := make(plotter.XYs, len(seg))
		for i, pt := range seg {
			xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		if len(xys) == 1 {
			if s, err := plotter.NewScatter(xys); err == nil {
				s.GlyphStyle = draw.GlyphStyle{Color: l.Color, Radius: 1, Shape: draw.CircleGlyph{}}
				p.Add(s)
			}
			continue
		}
		if ln, err := plotter.NewLine(xys); err == nil {
			ln.LineStyle = l
			p.Add(ln)
		}
	}
}

// spans shades each save's time span in a time figure, and labels it in
// the row above the data area, over a bracket as wide as the span.
type spans struct {
	saves  []src.Save
	labels []string // full: "#3 BGSAVE fork"
	short  []string // when the full one has no room: "#3"
}

// Plot implements plot.Plotter: the shading, behind the lines.
func (s *spans) Plot(c draw.Canvas, p *plot.Plot) {
	for _, r := range s.extents(c, p) {
		c.SetColor(spanFill)
		c.Fill(vg.Rectangle{Min: vg.Point{X: r[0], Y: c.Min.Y}, Max: vg.Point{X: r[1], Y: c.Max.Y}}.Path())
	}
}

// extents are the saves' spans on c, clipped to it; a span narrower than
// a point (a save seen by one sample, or none) is widened to one.
func (s *spans) extents(c draw.Canvas, p *plot.Plot) [][2]vg.Length {
	trX, _ := p.Transforms(&c)
	out := make([][2]vg.Length, len(s.saves))
	for i, sv := range s.saves {
		x0 := max(trX(sv.Started.Seconds()), c.Min.X)
		x1 := min(trX(sv.Ended.Seconds()), c.Max.X)
		if x1-x0 < 1 {
			x1 = x0 + 1
		}
		out[i] = [2]vg.Length{x0, x1}
	}
	return out
}

// label writes each save's label in the row above the data area dc, from
// the left of its span: in full where it does not run into the next, else
// its number alone, else (a crowd of saves) not at all: the table of
// saves lists every one.
func (s *spans) label(c draw.Canvas, dc draw.Canvas, p *plot.Plot) {
	sty := textStyle(inkText)
	y := dc.Max.Y + 3
	ext := s.extents(dc, p)
	free := dc.Min.X // where the next label may start
	for i, r := range ext {
		if r[0] > dc.Max.X || r[1] < dc.Min.X {
			continue
		}
		c.StrokeLine2(draw.LineStyle{Color: inkFaint, Width: 0.8}, r[0], y-1.5, r[1], y-1.5)
		c.StrokeLine2(draw.LineStyle{Color: inkFaint, Width: 0.8}, r[0], y-1.5, r[0], dc.Max.Y)
		limit := dc.Max.X
		if i+1 < len(ext) {
			limit = min(limit, ext[i+1][0]-2)
		}
		for _, text := range []string{s.labels[i], s.short[i]} {
			w := sty.Width(text)
			x := max(r[0], free)
			if x+w > dc.Max.X {
				x = dc.Max.X - w
			}
			if x >= free && x+w <= limit {
				c.FillText(sty, vg.Point{X: x, Y: y}, text)
				free = x + w + 4
				break
			}
		}
	}
}

// peakMarks marks points with a triangle in colour c.
func peakMarks(p *plot.Plot, pts []src.Point, c color.Color) {
	if len(pts) == 0 {
		return
	}
	xys := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
	}
	if s, err := plotter.NewScatter(xys); err == nil {
		s.GlyphStyle = peakGlyph(c)
		p.Add(s)
	}
}

func peakGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: 2.5, Shape: draw.TriangleGlyph{}}
}
