package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/vkwatch/vkwatch/source"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/source/units"
)

func init() {
	// gonum/plot's default face is Liberation Serif; sans reads better
	// small and on paper. Its SVG names the family without a fallback,
	// which inlineSVG adds.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

// Figure sizes, in points. A server's figures sit side by side with the
// other server's, two to a row on A4 landscape or a laptop screen.
const (
	figW      = 460
	figH      = 190
	costH     = 260
	pngDPI    = 144 // PNG for a post: sharp on a high-density screen
	buckets   = 500 // columns a figure's data area can show, about
	costCells = 300
)

// The colours: Okabe and Ito's palette, told apart by colour-blind readers
// and on a grey printer (with the dashes).
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
	colFootprint = color.RGBA{0xD5, 0x5E, 0x00, 255}
	colRSS       = color.RGBA{0x00, 0x72, 0xB2, 255}
	colUsed      = color.RGBA{0x00, 0x9E, 0x73, 255}
	colOps       = color.RGBA{0x00, 0x72, 0xB2, 255}
	colP99       = color.RGBA{0x00, 0x9E, 0x73, 255}
	colMax       = color.RGBA{0xD5, 0x5E, 0x00, 255}
	// Not premultiplied: NRGBA, so the PNG and the SVG agree.
	spanColours = map[source.SaveKind]color.NRGBA{
		source.SaveFork:     {0xD5, 0x5E, 0x00, 40},
		source.SaveForkless: {0x00, 0x9E, 0x73, 40},
		source.SaveAOF:      {0xCC, 0x79, 0xA7, 40},
	}
	spanOther = color.NRGBA{0x80, 0x80, 0x80, 40}
	spanText  = color.RGBA{0x40, 0x40, 0x40, 255}
)

func serverColour(i int) color.RGBA { return serverColours[i%len(serverColours)] }

// Figure is one drawn figure.
type Figure struct {
	Name  string // file name stem for --figures
	Title string // caption on the page
	plot  *plot.Plot
	w, h  vg.Length

	svgBytes []byte // SVG, once rendered
}

// SVG renders the figure as a standalone SVG document.
func (f *Figure) SVG() ([]byte, error) {
	c := vgsvg.New(f.w, f.h)
	f.plot.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return withFontFallback(b.Bytes()), nil
}

// PNG renders the figure as a PNG image.
func (f *Figure) PNG() ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	f.plot.Draw(draw.New(c))
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
func inlineSVG(svg []byte, title string) string {
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
	_ = title
	return s
}

// newPlot is a plot with the house's look.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 10
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 8
		a.Tick.Label.Font.Size = 7
	}
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = 7
	p.Legend.ThumbnailWidth = 12
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds a line of segments to p; the legend names it once.
func addLine(p *plot.Plot, segs [][]src.Point, name string, c color.Color, dashes []vg.Length, width vg.Length) {
	first := true
	for _, seg := range segs {
		xys := make(plotter.XYs, len(seg))
		for i, pt := range seg {
			xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		var l *plotter.Line
		var s *plotter.Scatter
		var err error
		if len(xys) == 1 {
			// A lone point between gaps is a dot: a line needs two.
			s, err = plotter.NewScatter(xys)
			if err != nil {
				continue
			}
			s.GlyphStyle.Color, s.GlyphStyle.Radius, s.GlyphStyle.Shape = c, 1, draw.CircleGlyph{}
			p.Add(s)
		} else {
			l, err = plotter.NewLine(xys)
			if err != nil {
				continue
			}
			l.Color, l.Width, l.Dashes = c, width, dashes
			p.Add(l)
		}
		if first && name != "" {
			if l != nil {
				p.Legend.Add(name, l)
			} else {
				p.Legend.Add(name, s)
			}
			first = false
		}
	}
}

// spans shades each save's time span in a time figure and labels it along
// its left edge: number, kind, method and trigger.
type spans struct {
	saves  []src.Save
	labels []string
}

// Plot implements plot.Plotter.
func (s spans) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	sty := draw.TextStyle{
		Color:    spanText,
		Font:     font.From(plot.DefaultFont, 6),
		Rotation: math.Pi / 2,
		XAlign:   draw.XLeft,
		YAlign:   draw.YTop,
		Handler:  plot.DefaultTextHandler,
	}
	for i, sv := range s.saves {
		x0 := max(trX(sv.Started.Seconds()), c.Min.X)
		x1 := min(trX(sv.Ended.Seconds()), c.Max.X)
		if x0 > c.Max.X || x1 < c.Min.X {
			continue
		}
		if x1-x0 < 1 {
			// A save seen by one sample, or none: still a visible stripe.
			x1 = x0 + 1
		}
		col, ok := spanColours[sv.Kind]
		if !ok {
			col = spanOther
		}
		c.SetColor(col)
		var path vg.Path
		path.Move(vg.Point{X: x0, Y: c.Min.Y})
		path.Line(vg.Point{X: x1, Y: c.Min.Y})
		path.Line(vg.Point{X: x1, Y: c.Max.Y})
		path.Line(vg.Point{X: x0, Y: c.Max.Y})
		path.Close()
		c.Fill(path)
		if i < len(s.labels) {
			c.FillText(sty, vg.Point{X: x0 + 1, Y: c.Min.Y + 2}, s.labels[i])
		}
	}
}

// peakMarks marks points with a glyph and, where given, a label.
func peakMarks(p *plot.Plot, pts []src.Point, labels []string, c color.Color) {
	if len(pts) == 0 {
		return
	}
	xys := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: 2.5, Shape: draw.TriangleGlyph{}}
	p.Add(s)
	if len(labels) != len(pts) {
		return
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = 6
		lb.TextStyle[i].Color = c
		lb.TextStyle[i].YAlign = draw.YBottom
		lb.TextStyle[i].XAlign = draw.XCenter
	}
	lb.Offset = vg.Point{Y: 3}
	p.Add(lb)
}

// bytesTicks labels a byte axis in one binary unit chosen by its range,
// at round numbers of that unit.
type bytesTicks struct{}

// Ticks implements plot.Ticker.
func (bytesTicks) Ticks(lo, hi float64) []plot.Tick {
	unit, name := units.Scale(math.Max(math.Abs(lo), math.Abs(hi)))
	ts := plot.DefaultTicks{}.Ticks(lo/unit, hi/unit)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'g', 4, 64) + " " + name
		}
		ts[i].Value *= unit
	}
	return ts
}

// countTicks labels a count axis (ops/s) with thousands separators.
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = units.CountFloat(ts[i].Value)
		}
	}
	return ts
}

// timeTicks labels a seconds axis in seconds, minutes or hours, whichever
// reads best over the range.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	unit, name := 1.0, "s"
	switch {
	case hi-lo > 3*3600:
		unit, name = 3600, "h"
	case hi-lo > 300:
		unit, name = 60, "min"
	}
	ts := plot.DefaultTicks{}.Ticks(lo/unit, hi/unit)
	for i := range ts {
		ts[i].Value *= unit
		if ts[i].Label != "" {
			ts[i].Label += " " + name
		}
	}
	return ts
}

// pctTicks labels a progress axis in percent.
type pctTicks struct{}

// Ticks implements plot.Ticker.
func (pctTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for v := 0.0; v <= 100; v += 10 {
		t := plot.Tick{Value: v}
		if int(v)%20 == 0 {
			t.Label = fmt.Sprintf("%.0f%%", v)
		}
		ts = append(ts, t)
	}
	return ts
}
