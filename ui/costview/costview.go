// Package costview is the cost view (key c), valkey PR #905's plot: what a
// save costs in memory against how far it has got, copy-on-write or
// footprint on Y and keys processed / keys total on X, for the running
// save and the last saves of every server on one plot, so fork and
// forkless, idle and loaded, or before and after a config change compare
// at a glance. Each curve ends in its digit, which the legend explains:
// the curves tell apart without colour.
package costview

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/chart"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/words"
)

// costY says what the cost view plots on Y.
type costY int

const (
	costCOW       costY = iota // Sample.COW: the child's copy-on-write
	costFootprint              // Sample.Footprint above its level before the save
)

// maxCurves is how many curves the view overlays, digits 1 to 8.
const maxCurves = 8

// Model is the cost view's component: its keys, what it plots, and
// its cached drawing. Like a pane it is sized by SetSize and draws from
// the store's views.
type Model struct {
	Cost  key.Binding // opens and closes the view
	CostY key.Binding // copy-on-write or footprint on Y

	y             costY
	width, height int
	plot          *chart.XY

	lines []string
	key   string // what lines were drawn for
}

// New returns the cost view's component.
func New() *Model {
	return &Model{
		Cost:  key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "cost")),
		CostY: key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "cow/footprint")),
	}
}

// SetSize gives the view the terminal's width and the rows between the
// title line and the footer.
func (c *Model) SetSize(w, h int) { c.width, c.height = w, h }

// Toggle implements view.Component.
func (c *Model) Toggle() *key.Binding { return &c.Cost }

// SyncKeys implements view.Component: y works while the view is open, and c
// says it closes it.
func (c *Model) SyncKeys(o view.Open) { view.SyncToggle(o, &c.Cost, "cost", &c.CostY) }

// Update implements view.Component: y plots the other figure.
func (c *Model) Update(_ *view.Context, msg tea.Msg) (bool, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	if key.Matches(k, c.CostY) {
		c.switchY()
		return true, nil
	}
	return false, nil
}

// ShortHelp implements view.Component: the view's keys first, the save keys
// after quit.
func (c *Model) ShortHelp(h view.HelpKeys) []key.Binding {
	g := h.Keys
	return []key.Binding{c.Cost, c.CostY, g.Pause, h.Toggles[view.Help], g.Quit, g.Save, g.Both, h.Next}
}

// FullHelp implements view.Component.
func (c *Model) FullHelp() []key.Binding { return []key.Binding{c.Cost, c.CostY} }

// View implements view.Component: the last saves' curves of the nodes the
// body speaks of: every node of a fleet, else the panes shown.
func (c *Model) View(ctx *view.Context) []string {
	views := make([]store.View, len(ctx.Nodes))
	for i, id := range ctx.Nodes {
		views[i] = ctx.Store.View(id)
	}
	return c.view(ctx.Styles, views)
}

// switchY plots the other figure.
func (c *Model) switchY() {
	c.y = 1 - c.y
	c.key = ""
}

// shownCurve is one curve on the plot, with what its legend says.
type shownCurve struct {
	store.Curve
	pts []chart.Point
}

// pickCurves takes the newest curves of every node, the same number from
// each (the running one first), at most maxCurves in all, oldest first.
func pickCurves(views []store.View) []store.Curve {
	if len(views) == 0 {
		return nil
	}
	per := max(maxCurves/len(views), 1)
	var out []store.Curve
	for _, v := range views {
		c := v.Curves
		out = append(out, c[max(len(c)-per, 0):]...)
	}
	slices.SortStableFunc(out, func(a, b store.Curve) int { return a.StartedAt.Compare(b.StartedAt) })
	return out[max(len(out)-maxCurves, 0):]
}

// points turns a curve into plot points: progress in percent on X, the
// chosen figure on Y in bytes. A point lacking the figure breaks the line.
func (c *Model) points(cv store.Curve) []chart.Point {
	base, baseOK := cv.BaseFootprint.Get()
	out := make([]chart.Point, 0, len(cv.Points))
	for _, p := range cv.Points {
		y := p.COW
		if c.y == costFootprint {
			if !baseOK && p.Footprint.OK {
				base, baseOK = p.Footprint.V, true // no level before: the first
			}
			y = source.Opt[int64]{V: p.Footprint.V - base, OK: p.Footprint.OK && baseOK}
		}
		out = append(out, chart.Point{X: p.Progress * 100, Y: float64(y.V), OK: y.OK})
	}
	return out
}

// view returns the view's lines, drawing only when a curve, the size or
// the figure changed.
func (c *Model) view(st *style.Styles, views []store.View) []string {
	width, height := c.width, c.height
	var key strings.Builder
	fmt.Fprintf(&key, "%d %d %d", width, height, c.y)
	for _, v := range views {
		fmt.Fprintf(&key, " %s:%d", v.ID, v.Version)
	}
	if c.lines != nil && c.key == key.String() {
		return c.lines
	}
	c.key = key.String()
	c.lines = c.draw(st, pickCurves(views), width, height)
	return c.lines
}

// yName names the figure on Y, and the other one.
func (c *Model) yName() (string, string) {
	if c.y == costFootprint {
		return "footprint above its level before the save", "copy-on-write"
	}
	return "copy-on-write", "footprint"
}

// draw draws the title, the legend and the plot.
func (c *Model) draw(st *style.Styles, curves []store.Curve, width, height int) []string {
	yName, other := c.yName()
	out := []string{st.Top.R("save cost curves") + st.Dim.R(" · Y: ") + st.Value.R(yName) +
		st.Dim.R(" (y: "+other+") · X: save progress, keys processed / total · c or esc closes")}
	if len(curves) == 0 {
		return text.FitLines(width, append(out,
			st.Dim.R("no save seen yet: b saves the focused server, B every server at once;"),
			st.Dim.R("a curve appears once the server reports a running save's key counts (current_save_keys_processed)"))...)
	}
	shown := make([]shownCurve, len(curves))
	for i, cv := range curves {
		shown[i] = shownCurve{Curve: cv, pts: c.points(cv)}
		out = append(out, legendLine(st, i, shown[i]))
	}
	rows := height - len(out) - 1
	if rows < 3 {
		return text.FitLines(width, out[:min(len(out), height)]...)
	}
	out = append(out, c.plotLines(st, shown, width, rows)...)
	return text.FitLines(width, out...)
}

// legendLine says what curve i is: its digit, server, kind, trigger and
// start time, and its highest point.
func legendLine(st *style.Styles, i int, sc shownCurve) string {
	paint := st.Curves[i%len(st.Curves)]
	state := st.OK.R("ok")
	switch {
	case sc.Running:
		state = st.Warn.R("▶ running")
	case sc.Status == "":
		state = st.Value.R(text.NA)
	case sc.Status != "ok":
		state = st.Err.R("✗ " + sc.Status)
	}
	peak, at, ok := 0.0, 0.0, false
	for _, p := range sc.pts {
		if p.OK && (!ok || p.Y > peak) {
			peak, at, ok = p.Y, p.X, true
		}
	}
	top := st.Label.R("peak ") + st.Value.R(text.NA)
	if ok {
		top = st.Label.R("peak ") + st.Value.R(text.Bytes(int64(peak)))
		if peak > 0 {
			top += st.Label.R(fmt.Sprintf(" at %.0f%%", at))
		}
	}
	when := text.NA
	if !sc.StartedAt.IsZero() {
		when = sc.StartedAt.Format("15:04:05")
	}
	return paint.R(strconv.Itoa(i+1)+" ━━") + " " + st.Addr.R(text.OrNA(sc.Addr)) + " " + st.Value.R(string(sc.Kind)) +
		st.Label.R(" by ") + st.Value.R(words.Trigger(sc.Trigger)) + " " + st.Value.R(when) + " " + state + " " + top
}

// plotLines draws the plot with its Y scale on the left and its X axis,
// 0 to 100% progress, below.
func (c *Model) plotLines(st *style.Styles, shown []shownCurve, width, rows int) []string {
	const yw = 9 // "12.3 MiB" and the axis
	pw := max(width-yw-1, 1)
	if c.plot == nil {
		c.plot = chart.NewXY(pw, rows)
		c.plot.ASCII = st.ASCII
	}
	c.plot.Resize(pw, rows)
	curves := make([][]chart.Point, len(shown))
	labels := make([]rune, len(shown))
	y0, y1 := 0.0, plot.UnitBytes.MinTop()
	for i, sc := range shown {
		curves[i], labels[i] = sc.pts, rune('1'+i)
		for _, p := range sc.pts {
			if p.OK {
				y0, y1 = min(y0, p.Y), max(y1, p.Y)
			}
		}
	}
	// Round scales, as the panes': the top the step above the highest
	// point, the bottom the step under a fall below the level before the
	// save (footprint), and half the top on the row that draws it, all in
	// one unit.
	y1 = plot.UnitBytes.RoundTop(y1)
	if y0 < 0 {
		y0 = -plot.UnitBytes.RoundTop(-y0)
	}
	ref := max(y1, -y0)
	mid := -1
	if rows >= 5 {
		mid = chart.RowOf((y1/2-y0)/(y1-y0), rows)
	}
	cells, owner := c.plot.Draw(curves, labels, 0, 100, y0, y1)
	out := make([]string, 0, rows+1)
	for y := range rows {
		tick, label := "│", ""
		switch y {
		case 0:
			tick, label = "┤", plot.UnitBytes.ScaleText(y1, ref)
		case rows - 1:
			tick, label = "┤", plot.UnitBytes.ScaleText(y0, ref)
		case mid:
			tick, label = "┤", plot.UnitBytes.ScaleText(y1/2, ref)
		}
		out = append(out, st.Label.R(text.FitRight(label, yw-1))+st.Dim.R(tick)+paintCells(st, cells[y], owner[y]))
	}
	ticks := []chart.Tick{{Col: pw - 1, Label: "100%"}, {Col: 0, Label: "0%"}}
	for _, q := range []int{50, 25, 75} {
		ticks = append(ticks, chart.Tick{Col: q * (pw - 1) / 100, Label: strconv.Itoa(q) + "%"})
	}
	out = append(out, strings.Repeat(" ", yw-1)+st.Dim.R("└"+chart.AxisLine(pw, ticks, '─')))
	return out
}

// paintCells paints a row of plot cells by the curve that owns each, one
// paint per run.
func paintCells(st *style.Styles, cells []rune, owner []int) string {
	var b strings.Builder
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && owner[j] == owner[i] {
			j++
		}
		run := string(cells[i:j])
		if owner[i] >= 0 {
			run = st.Curves[owner[i]%len(st.Curves)].R(run)
		}
		b.WriteString(run)
		i = j
	}
	return b.String()
}
