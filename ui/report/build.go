// Package report draws vkwatch report's page: the figures of recordings
// and benches (gonum.org/v1/plot, as SVG inline and as files) and one
// self-contained HTML page (html/template) with the save and bench tables.
// What it draws comes from source/report; it reads no file itself.
package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/source/units"
)

// Report is a built report: its figures, drawn once, and the page's data.
type Report struct {
	Files   []fileView
	Costs   []*Figure
	Saves   []saveRow
	Benches []benchView
	// Figures lists every figure in page order (for --figures).
	Figures []*Figure
}

type fileView struct {
	Path     string
	Kind     string // "recording" or "bench"
	Recorded string
	VKWatch  string
	Settings string
	Servers  []serverView
}

type serverView struct {
	Title   string
	Sub     string
	Colour  string
	Figures []*Figure
}

type saveRow struct {
	Num                        int
	File, Server, Colour       string
	Kind, Method, Trigger      string
	Status                     string
	Start, Duration, ServerSec cell
	COW, PeakCOW, PeakAt       cell
	PeakFootprint, ForkPause   cell
	OpsBefore, OpsDuring       cell
	P99Before, P99During       cell
	MaxBefore, MaxDuring       cell
}

type benchView struct {
	Path string
	Rows []benchRow
	Runs []benchRunRow
}

type benchRow struct {
	Server, Label, Kind, Colour string
	Runs                        int
	Cols                        []statCell
}

type statCell struct {
	Mean, Range cell
}

type benchRunRow struct {
	Server                      string
	Run                         int
	Kind, Status                string
	COW, ServerCOW, MemDelta    cell
	Save, ServerSec, WriterOps  cell
	WorstPing, P99Ping, Dataset cell
}

// benchColumns are the seeds' table's columns, in order: both memory
// instruments side by side first, as the seed article put them.
var benchColumns = []struct {
	Head string
	get  func(bench.Summary) bench.Stat
	f    func(float64) cell
}{
	{bench.COWMeasure, func(s bench.Summary) bench.Stat { return s.COW }, fbytes},
	{"memory delta (RSS + child's dirty pages)", func(s bench.Summary) bench.Stat { return s.MemDelta }, fbytes},
	{"save time (observed)", func(s bench.Summary) bench.Stat { return s.SaveTime }, fsecs},
	{"save time (server)", func(s bench.Summary) bench.Stat { return s.ServerTime }, fsecs},
	{"writers ops/s", func(s bench.Summary) bench.Stat { return s.WriterOps }, fcount},
	{"worst PING", func(s bench.Summary) bench.Stat { return s.WorstPing }, fms},
	{"p99 PING (estimated)", func(s bench.Summary) bench.Stat { return s.P99Ping }, fms},
	{bench.BlockedMeasure, func(s bench.Summary) bench.Stat { return s.Blocked }, fcount},
}

func fbytes(v float64) cell { return cell{units.BytesFixed(v), strconv.FormatFloat(v, 'f', -1, 64)} }
func fsecs(v float64) cell {
	return cell{strconv.FormatFloat(v, 'f', 2, 64) + " s", strconv.FormatFloat(v, 'f', -1, 64)}
}
func fcount(v float64) cell { return cell{units.CountFloat(v), strconv.FormatFloat(v, 'f', -1, 64)} }
func fms(v float64) cell    { return cell{msText(v), strconv.FormatFloat(v, 'f', -1, 64)} }

// BenchColumns names the seeds' table's columns (for tests and docs).
func BenchColumns() []string {
	out := make([]string, len(benchColumns))
	for i, c := range benchColumns {
		out[i] = c.Head
	}
	return out
}

// scales are the page's shared scales: every server's figure of a kind
// has the same Y range, so side by side they compare at a glance.
type scales struct {
	memHi, opsHi     float64
	pingLo, pingHi   float64
	havePing, haveMe bool
}

func pageScales(ins []src.Input) scales {
	var sc scales
	sc.pingLo, sc.pingHi = math.Inf(1), 0
	for _, in := range ins {
		if in.Recording == nil {
			continue
		}
		for _, s := range in.Recording.Servers {
			if _, hi, ok := src.Extent(s.Used, s.RSS, s.Footprint); ok {
				sc.memHi, sc.haveMe = math.Max(sc.memHi, hi), true
			}
			if _, hi, ok := src.Extent(s.Ops); ok {
				sc.opsHi = math.Max(sc.opsHi, hi)
			}
			for _, v := range [][]float64{s.PingP99, s.PingMax} {
				for _, x := range v {
					if x > 0 {
						sc.pingLo, sc.pingHi, sc.havePing = math.Min(sc.pingLo, x), math.Max(sc.pingHi, x), true
					}
				}
			}
		}
	}
	if sc.opsHi <= 0 {
		sc.opsHi = 1
	}
	if !sc.haveMe || sc.memHi <= 0 {
		sc.memHi = 1
	}
	if !sc.havePing {
		sc.pingLo, sc.pingHi = 0.01, 1
	}
	return sc
}

// Build draws the figures of ins and lays out the page's data.
func Build(ins []src.Input) (*Report, error) {
	r := &Report{}
	sc := pageScales(ins)
	colourOf := map[string]int{}
	var curves []saveCurve
	for fi, in := range ins {
		fv := fileView{Path: clean(in.Path)}
		switch {
		case in.Recording != nil:
			curves = append(curves, r.addRecording(&fv, ins, fi, colourOf, sc)...)
		default:
			fv.Kind = "bench"
			r.Benches = append(r.Benches, benchViewOf(fv.Path, ins, fi, colourOf))
		}
		r.Files = append(r.Files, fv)
	}
	if len(curves) > 0 {
		r.Costs = costFigures(curves)
		r.Figures = append(r.Figures, r.Costs...)
	}
	return r, nil
}

// saveCurve is a save of the page for the cost figures: its server's
// colour and name.
type saveCurve struct {
	save   *src.Save
	colour int
	name   string
}

// addRecording lays out file fi of ins, a recording, in fv: a view per
// server with its three figures (added to r's), its saves added to r's
// table. It returns the saves for the cost figures.
func (r *Report) addRecording(fv *fileView, ins []src.Input, fi int, colourOf map[string]int, sc scales) []saveCurve {
	rec := ins[fi].Recording
	fv.Kind = "recording"
	fv.Recorded = rec.Epoch.UTC().Format("2006-01-02 15:04:05 UTC")
	fv.VKWatch = clean(orNA(rec.VKWatch))
	fv.Settings = settingsText(rec.Settings)
	dur := 0.0
	for _, s := range rec.Servers {
		dur = math.Max(dur, s.Duration())
	}
	var curves []saveCurve
	for _, s := range rec.Servers {
		ci := colourIndex(colourOf, fi, string(s.Node))
		name := serverName(ins, fi, s.Addr)
		sv := serverView{Title: clean(s.Addr), Sub: identityText(s), Colour: hex(serverColour(ci))}
		stem := fmt.Sprintf("%02d-%s", len(r.Figures)/3+1, safeName(s.Addr))
		labels := make([]string, len(s.Saves))
		for i := range s.Saves {
			num := len(r.Saves) + 1
			r.Saves = append(r.Saves, saveRowOf(num, fv.Path, s, &s.Saves[i], sv.Colour))
			labels[i] = saveLabel(num, &s.Saves[i])
			curves = append(curves, saveCurve{&s.Saves[i], ci, name})
		}
		sp := spans{saves: s.Saves, labels: labels}
		sv.Figures = []*Figure{
			memoryFigure(stem, name, s, sp, dur, sc),
			opsFigure(stem, name, s, sp, dur, sc),
			pingFigure(stem, name, s, sp, dur, sc),
		}
		r.Figures = append(r.Figures, sv.Figures...)
		fv.Servers = append(fv.Servers, sv)
	}
	return curves
}

// benchViewOf lays out file fi of ins, a bench, at path: a row per server
// and a row per run.
func benchViewOf(path string, ins []src.Input, fi int, colourOf map[string]int) benchView {
	bv := benchView{Path: path}
	for _, s := range ins[fi].Bench {
		ci := benchColour(colourOf, ins, fi, s.Addr)
		bv.Rows = append(bv.Rows, benchRowOf(s, hex(serverColour(ci))))
		for i, run := range s.Runs {
			bv.Runs = append(bv.Runs, benchRunOf(s, i+1, run))
		}
	}
	return bv
}

// costFigures draws every save's copy-on-write and footprint against its
// progress, in its server's colour, each server's highest peaks numbered.
func costFigures(curves []saveCurve) []*Figure {
	cow := newPlot("Copy-on-write against save progress (every save)", "keys processed", "copy-on-write")
	foot := newPlot("Footprint against save progress (every save)", "keys processed", "footprint")
	for _, p := range []*plot.Plot{cow, foot} {
		p.X.Min, p.X.Max = 0, 100
		p.X.Tick.Marker = pctTicks{}
		p.Y.Tick.Marker = bytesTicks{}
		// The curves rise to the top left: the legend goes below.
		p.Legend.Top = false
	}
	peaks := drawCostCurves(cow, foot, curves)
	numberPeaks(cow, foot, peaks)
	// Copy-on-write starts at none; the footprint at the server's
	// size, so its own range shows the rise.
	cow.Y.Min = 0
	return []*Figure{
		{Name: "cost-cow", Title: "Copy-on-write against save progress", plot: cow, w: figW, h: costH},
		{Name: "cost-footprint", Title: "Footprint against save progress", plot: foot, w: figW, h: costH},
	}
}

// serverPeaks are a server's highest copy-on-write and footprint over its
// saves, where it has them.
type serverPeaks struct {
	cow, foot src.Point
	hc, hf    bool
}

// drawCostCurves adds each save's curves and peak marks to cow and foot, a
// server's name in the legend once, and returns each server's (by colour)
// highest peaks.
func drawCostCurves(cow, foot *plot.Plot, curves []saveCurve) map[int]serverPeaks {
	named := map[string]bool{}
	peaks := map[int]serverPeaks{}
	for _, c := range curves {
		cc := c.save.CostCurve(costCells)
		col := serverColour(c.colour)
		legend := ""
		if !named[c.name] {
			legend, named[c.name] = c.name, true
		}
		addLine(cow, cc.COW, legend, col, nil, 1)
		addLine(foot, cc.Footprint, legend, col, nil, 1)
		pk := peaks[c.colour]
		if cc.HaveCOW {
			peakMarks(cow, []src.Point{cc.PeakCOW}, nil, col)
			if !pk.hc || cc.PeakCOW.Y > pk.cow.Y {
				pk.cow, pk.hc = cc.PeakCOW, true
			}
		}
		if cc.HaveFootprint {
			peakMarks(foot, []src.Point{cc.PeakFootprint}, nil, col)
			if !pk.hf || cc.PeakFootprint.Y > pk.foot.Y {
				pk.foot, pk.hf = cc.PeakFootprint, true
			}
		}
		peaks[c.colour] = pk
	}
	return peaks
}

// numberPeaks labels each server's highest peak, in order of colour: the
// rest are marked only.
func numberPeaks(cow, foot *plot.Plot, peaks map[int]serverPeaks) {
	keys := make([]int, 0, len(peaks))
	for k := range peaks {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		pk := peaks[k]
		if pk.hc {
			peakMarks(cow, []src.Point{pk.cow}, []string{"peak " + units.BytesFixed(pk.cow.Y)}, serverColour(k))
		}
		if pk.hf {
			peakMarks(foot, []src.Point{pk.foot}, []string{"peak " + units.BytesFixed(pk.foot.Y)}, serverColour(k))
		}
	}
}

// colourIndex gives each server of the page its own colour, in order of
// appearance; a bench's server and a recording's of the same file and
// address share one.
func colourIndex(m map[string]int, file int, key string) int {
	k := strconv.Itoa(file) + "\x00" + key
	if i, ok := m[k]; ok {
		return i
	}
	m[k] = len(m)
	return m[k]
}

// benchColour is the colour of a bench's server: that of the same address
// in a recording on the page (the bench's own --record, most likely), else
// one of its own.
func benchColour(m map[string]int, ins []src.Input, file int, addr string) int {
	for fi, in := range ins {
		if in.Recording == nil {
			continue
		}
		for _, s := range in.Recording.Servers {
			if s.Addr == addr {
				return colourIndex(m, fi, string(s.Node))
			}
		}
	}
	return colourIndex(m, file, addr)
}

// serverName names a server in a legend: its address, and the file's name
// when the page compares several files.
func serverName(ins []src.Input, file int, addr string) string {
	if len(ins) == 1 {
		return clean(addr)
	}
	return clean(addr) + " (" + clean(filepath.Base(ins[file].Path)) + ")"
}

func memoryFigure(stem, name string, s *src.Server, sp spans, dur float64, sc scales) *Figure {
	p := linearTimePlot("Memory: "+name, "bytes", dur, sc.memHi, bytesTicks{}, sp)
	foot := "footprint"
	if s.FootprintFrom != "" {
		foot += " (" + string(s.FootprintFrom) + ")"
	}
	addLine(p, src.Decimate(s.T, s.Used, 0, dur, buckets), "used_memory", colUsed, nil, 1)
	addLine(p, src.Decimate(s.T, s.RSS, 0, dur, buckets), "RSS (INFO)", colRSS, nil, 1)
	addLine(p, src.Decimate(s.T, s.Footprint, 0, dur, buckets), foot, colFootprint, nil, 1.2)
	return &Figure{Name: stem + "-memory", Title: "Memory of " + name, plot: p, w: figW, h: figH}
}

func opsFigure(stem, name string, s *src.Server, sp spans, dur float64, sc scales) *Figure {
	p := linearTimePlot("Ops/s: "+name, "ops/s", dur, sc.opsHi, countTicks{}, sp)
	addLine(p, src.Decimate(s.T, s.Ops, 0, dur, buckets), "ops/s (total_commands_processed)", colOps, nil, 1)
	return &Figure{Name: stem + "-ops", Title: "Ops/s of " + name, plot: p, w: figW, h: figH}
}

func pingFigure(stem, name string, s *src.Server, sp spans, dur float64, sc scales) *Figure {
	p := newPlot("PING per interval: "+name, "time since the recording began", "ms (log)")
	timeAxis(p, dur)
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	// Log scale: the legend's room is a factor, not a fraction.
	p.Y.Min, p.Y.Max = sc.pingLo/1.5, sc.pingHi*8
	p.Add(sp)
	positive := func(vs []float64) []float64 {
		out := make([]float64, len(vs))
		for i, v := range vs {
			if v > 0 {
				out[i] = v
			} else {
				out[i] = math.NaN()
			}
		}
		return out
	}
	addLine(p, src.Decimate(s.T, positive(s.PingMax), 0, dur, buckets), "max", colMax, nil, 1)
	addLine(p, src.Decimate(s.T, positive(s.PingP99), 0, dur, buckets), "p99", colP99, nil, 1)
	return &Figure{Name: stem + "-ping", Title: "PING of " + name, plot: p, w: figW, h: figH}
}

// headroom leaves the top of a time figure to its legend, so that no
// line runs under it.
const headroom = 1.35

// linearTimePlot is a plot over the recording's time of a value from 0 to
// hi (and the legend's headroom above it), the saves' spans behind.
func linearTimePlot(title, ylabel string, dur, hi float64, ticks plot.Ticker, sp spans) *plot.Plot {
	p := newPlot(title, "time since the recording began", ylabel)
	timeAxis(p, dur)
	p.Y.Min, p.Y.Max = 0, hi*headroom
	p.Y.Tick.Marker = ticks
	p.Add(sp)
	return p
}

func timeAxis(p *plot.Plot, dur float64) {
	p.X.Min, p.X.Max = 0, math.Max(dur, 1)
	p.X.Tick.Marker = timeTicks{}
}

// saveLabel is the label along a save's span: its number in the table,
// kind, method and trigger.
func saveLabel(num int, sv *src.Save) string {
	return clean(fmt.Sprintf("#%d %s · method %s · %s", num, orNA(string(sv.Kind)), orNA(sv.Method), triggerText(sv.Trigger)))
}

func saveRowOf(num int, file string, s *src.Server, sv *src.Save, colour string) saveRow {
	peak := bytesCell(sv.PeakCOW)
	return saveRow{
		Num: num, File: file, Server: clean(s.Addr), Colour: colour,
		Kind: clean(orNA(string(sv.Kind))), Method: clean(orNA(sv.Method)), Trigger: clean(triggerText(sv.Trigger)),
		Status:    clean(orNA(sv.Status)),
		Start:     secsCell(sv.Started),
		Duration:  secsCell(sv.Observed),
		ServerSec: optSecsCell(sv.ServerSeconds),
		COW:       cowCell(&sv.SaveReport), PeakCOW: peak, PeakAt: pctCell(sv.PeakAtProgress),
		PeakFootprint: bytesCell(sv.PeakFootprintDelta), ForkPause: pauseCell(sv.ForkPause),
		OpsBefore: opsCell(sv.OpsBefore), OpsDuring: opsCell(sv.OpsDuring),
		P99Before: pingCell(sv.PingBefore, false), P99During: pingCell(sv.PingDuring, false),
		MaxBefore: pingCell(sv.PingBefore, true), MaxDuring: pingCell(sv.PingDuring, true),
	}
}

func pingCell(l source.Latency, worst bool) cell {
	if l.Count == 0 && l.InFlight == 0 {
		return na
	}
	if worst {
		return latencyMs(l.Worst())
	}
	return latencyMs(l.P99)
}

func benchRowOf(s bench.Summary, colour string) benchRow {
	row := benchRow{Server: clean(s.Addr), Label: clean(s.Label), Kind: clean(orNA(s.Kind)), Colour: colour, Runs: len(s.Runs)}
	for _, c := range benchColumns {
		st := c.get(s)
		if st.N == 0 {
			row.Cols = append(row.Cols, statCell{na, na})
			continue
		}
		lo, hi := c.f(st.Min), c.f(st.Max)
		rng := cell{lo.Text + " – " + hi.Text, lo.Raw + "," + hi.Raw}
		if st.N != len(s.Runs) {
			rng.Text += fmt.Sprintf(" (%d runs)", st.N)
		}
		row.Cols = append(row.Cols, statCell{c.f(st.Mean), rng})
	}
	return row
}

func benchRunOf(s bench.Summary, n int, r bench.Run) benchRunRow {
	return benchRunRow{
		Server: clean(s.Addr), Run: n, Kind: clean(orNA(string(r.Report.Kind))), Status: clean(orNA(r.Report.Status)),
		COW: cowCell(&r.Report), ServerCOW: bytesCell(r.ServerCOW), MemDelta: bytesCell(r.MemDelta),
		Save: secsCell(r.Report.Observed), ServerSec: optSecsCell(r.ServerSeconds),
		WriterOps: fcount(r.WriterOps), WorstPing: latencyMs(r.WorstPing), P99Ping: latencyMs(r.P99Ping),
		Dataset: cell{units.CountFloat(float64(r.DatasetKeys)), strconv.FormatInt(r.DatasetKeys, 10)},
	}
}

func identityText(s *src.Server) string {
	var parts []string
	if id := s.Identity; id != nil {
		name := id.ServerName
		if name == "" {
			name = "server"
		}
		parts = append(parts, name+" "+orNA(id.Version))
		if id.Role != "" {
			parts = append(parts, id.Role)
		}
	}
	parts = append(parts, plural(len(s.T), "sample"), plural(len(s.Saves), "save"))
	if s.FootprintFrom != "" {
		parts = append(parts, "footprint from "+string(s.FootprintFrom))
	}
	return clean(strings.Join(parts, " · "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func settingsText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + " " + m[k])
	}
	return clean(b.String())
}

func hex(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// safeName makes an address fit a file name: letters, digits, dots and
// dashes stay, the rest become underscores.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	return b.String()
}
