package page

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/source/units"
)

// minCurvePoints is the fewest progress values a save's curve needs to be
// drawn: the server reports a save's progress about once a second, so a
// faster save has one or two, a dot or a jump that says nothing of a
// curve ("peaked at 0 %").
const minCurvePoints = 3

// curvePoints is the number of distinct progress values of sv's curve at
// which it has a copy-on-write or a footprint.
func curvePoints(sv *src.Save) int {
	seen := map[float64]bool{}
	for _, p := range sv.Curve {
		if p.COW.OK || p.Footprint.OK {
			seen[p.Progress] = true
		}
	}
	return len(seen)
}

// withCurves splits the saves into those with enough points for a cost
// curve and those without.
func withCurves(all []saveCurve) (drawn, left []saveCurve) {
	for _, c := range all {
		if curvePoints(c.save) >= minCurvePoints {
			drawn = append(drawn, c)
		} else {
			left = append(left, c)
		}
	}
	return drawn, left
}

// costNote says which saves have no cost curve, and why.
func costNote(left []saveCurve) string {
	if len(left) == 0 {
		return ""
	}
	nums := make([]string, len(left))
	for i, c := range left {
		nums[i] = "#" + strconv.Itoa(c.num)
	}
	which := "Save " + nums[0] + " has"
	if len(nums) > 1 {
		which = "Saves " + strings.Join(nums[:len(nums)-1], ", ") + " and " + nums[len(nums)-1] + " have"
	}
	return fmt.Sprintf("%s fewer than %d progress reports (the server updates current_save_keys_processed about once a second), too few for a curve: their figures are in the table of saves.",
		which, minCurvePoints)
}

// costFigures draws every save's copy-on-write and footprint against its
// progress, in its server's colour, each save's peak marked; the keys name
// each server's highest.
func costFigures(curves []saveCurve) []*Figure {
	x := roundScale(0, 100)
	x.Unit = "%"
	cow := newPlot(x.Title("save progress: keys written"), "")
	foot := newPlot(x.Title("save progress: keys written"), "")
	cc := make([]src.Curve, len(curves))
	var cowHi, footLo, footHi = 0.0, math.Inf(1), math.Inf(-1)
	for i, c := range curves {
		cc[i] = c.save.CostCurve(costCells)
		for _, seg := range cc[i].COW {
			for _, p := range seg {
				cowHi = math.Max(cowHi, p.Y)
			}
		}
		for _, seg := range cc[i].Footprint {
			for _, p := range seg {
				footLo, footHi = math.Min(footLo, p.Y), math.Max(footHi, p.Y)
			}
		}
		if cc[i].HaveCOW {
			cowHi = math.Max(cowHi, cc[i].PeakCOW.Y)
		}
	}
	if footLo > footHi {
		footLo, footHi = 0, 1
	}
	figs := []*Figure{
		{Name: "cost-cow", Caption: "Copy-on-write against save progress", plot: cow, w: figW},
		{Name: "cost-footprint", Caption: "Footprint against save progress", plot: foot, w: figW},
	}
	for i, ys := range []axisScale{bytesScale(0, math.Max(cowHi, 1)), bytesScale(footLo, footHi)} {
		p := figs[i].plot
		p.X.Min, p.X.Max, p.X.Tick.Marker = x.Min, x.Max, x
		p.Y.Min, p.Y.Max, p.Y.Tick.Marker = ys.Min, ys.Max, ys
		p.Y.Label.Text = ys.Title([]string{"copy-on-write", "footprint"}[i])
	}
	figs[0].keys, figs[1].keys = drawCostCurves(cow, foot, curves, cc)
	for _, f := range figs {
		// A key per server: many servers take rows of keys, which the
		// figure grows by rather than squeeze its curves.
		f.h = costH + vg.Length(len(f.keyRows(f.w)))*rowH
	}
	return figs
}

// drawCostCurves adds each save's curves and peak marks to cow and foot,
// and returns their keys: a server's colour once, with its highest peak.
func drawCostCurves(cow, foot *plot.Plot, curves []saveCurve, cc []src.Curve) (cowKeys, footKeys []key) {
	type peaks struct {
		name      string
		cow, foot float64
		hc, hf    bool
	}
	byColour := map[int]*peaks{}
	for i, c := range curves {
		col := serverColour(c.colour)
		addLine(cow, cc[i].COW, solid.in(col))
		addLine(foot, cc[i].Footprint, solid.in(col))
		pk := byColour[c.colour]
		if pk == nil {
			pk = &peaks{name: c.name}
			byColour[c.colour] = pk
		}
		if cc[i].HaveCOW {
			peakMarks(cow, []src.Point{cc[i].PeakCOW}, col)
			pk.cow, pk.hc = math.Max(pk.cow, cc[i].PeakCOW.Y), true
		}
		if cc[i].HaveFootprint {
			peakMarks(foot, []src.Point{cc[i].PeakFootprint}, col)
			pk.foot, pk.hf = math.Max(pk.foot, cc[i].PeakFootprint.Y), true
		}
	}
	colours := make([]int, 0, len(byColour))
	for k := range byColour {
		colours = append(colours, k)
	}
	sort.Ints(colours)
	for _, k := range colours {
		pk, ls := byColour[k], solid.in(serverColour(k))
		cowKeys = append(cowKeys, lineKey(peakText(pk.name, pk.cow, pk.hc), ls))
		footKeys = append(footKeys, lineKey(peakText(pk.name, pk.foot, pk.hf), ls))
	}
	g := peakGlyph(inkText)
	mark := key{label: "a save's peak", glyph: &g}
	return append(cowKeys, mark), append(footKeys, mark)
}

func peakText(name string, v float64, ok bool) string {
	if !ok {
		return name
	}
	return name + ", peak " + units.BytesFixed(v)
}
