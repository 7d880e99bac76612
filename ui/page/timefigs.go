package page

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"

	src "github.com/vkwatch/vkwatch/source/report"
)

// timeKind is a kind of figure over a recording's time, drawn for every
// server: a new one is an entry of timeKinds.
type timeKind struct {
	id, title string
	series    []series
	// y is the figure's value axis, from the page's shared scales; a log
	// axis's values are the log10 of the series'.
	y func(scales) yAxis
}

// series is a line of a time figure, in its server's colour.
type series struct {
	name  string
	ys    func(*src.Server) []float64
	style lineStyle
	// footprint: the name says the instrument most samples read it by.
	footprint bool
}

// yAxis is a time figure's value axis.
type yAxis struct {
	title    string
	min, max float64
	ticks    plot.Ticker
	log      bool // the values are the log10 of the series'
}

var timeKinds = []timeKind{
	{id: "memory", title: "Memory", series: []series{
		{name: "footprint", ys: func(s *src.Server) []float64 { return s.Footprint }, style: solid, footprint: true},
		{name: "RSS (used_memory_rss)", ys: func(s *src.Server) []float64 { return s.RSS }, style: dashed},
		{name: "used_memory", ys: func(s *src.Server) []float64 { return s.Used }, style: dotted},
	}, y: func(sc scales) yAxis { return linearAxis(sc.mem, "memory") }},
	{id: "ops", title: "Operations per second", series: []series{
		{name: "ops/s (total_commands_processed, per interval)", ys: func(s *src.Server) []float64 { return s.Ops }, style: solid},
	}, y: func(sc scales) yAxis { return linearAxis(sc.ops, "ops/s") }},
	{id: "ping", title: "PING round trip", series: []series{
		{name: "worst of each interval", ys: func(s *src.Server) []float64 { return s.PingMax }, style: solid},
		{name: "p99 of each interval", ys: func(s *src.Server) []float64 { return s.PingP99 }, style: dashed},
	}, y: func(sc scales) yAxis {
		return yAxis{title: "PING (ms, log)", min: math.Log10(sc.pingLo), max: math.Log10(sc.pingHi), ticks: logTicks{}, log: true}
	}},
}

func linearAxis(s axisScale, what string) yAxis {
	return yAxis{title: s.Title(what), min: s.Min, max: s.Max, ticks: s}
}

// timeAxis is a recording's time axis: seconds since its epoch, from 0 to
// hi, labelled with the time of day.
type timeAxis struct {
	clock clockTicks
	hi    float64
}

// figure draws kind k of server s in colour col, its saves' spans behind.
func (k timeKind) figure(stem, name string, s *src.Server, col color.RGBA, tx timeAxis, sc scales, sp *spans) *Figure {
	ya := k.y(sc)
	hi := math.Max(tx.hi, 1)
	p := newPlot(tx.clock.Title(0), ya.title)
	p.X.Min, p.X.Max = 0, hi
	p.X.Tick.Marker = tx.clock
	p.Y.Min, p.Y.Max, p.Y.Tick.Marker = ya.min, ya.max, ya.ticks
	p.Add(sp)
	f := &Figure{Name: stem + "-" + k.id, Caption: name, plot: p, w: figW, h: figH + 2*rowH, spans: sp}
	for _, se := range k.series {
		ys := se.ys(s)
		if ya.log {
			ys = log10(ys)
		}
		label := se.name
		if se.footprint && s.FootprintFrom != "" {
			label += " (" + clean(string(s.FootprintFrom)) + ")"
		}
		ls := se.style.in(col)
		addLine(p, src.Decimate(s.T, ys, 0, hi, buckets), ls)
		f.keys = append(f.keys, lineKey(label, ls))
	}
	return f
}

// log10 is the log10 of vs, NaN where a value is not above zero: a log
// scale has no place for it.
func log10(vs []float64) []float64 {
	out := positive(vs)
	for i, v := range out {
		out[i] = math.Log10(v)
	}
	return out
}

// positive is vs with every value that is not above zero NaN: a log scale
// has no place for it.
func positive(vs []float64) []float64 {
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

// scales are the page's shared scales: every server's figure of a kind
// has the same value axis, so side by side they compare at a glance.
type scales struct {
	mem, ops       axisScale
	pingLo, pingHi float64
}

func pageScales(ins []src.Input) scales {
	var memHi, opsHi float64
	pingLo, pingHi := math.Inf(1), 0.0
	for _, in := range ins {
		if in.Recording == nil {
			continue
		}
		for _, s := range in.Recording.Servers {
			if _, hi, ok := src.Extent(s.Used, s.RSS, s.Footprint); ok {
				memHi = math.Max(memHi, hi)
			}
			if _, hi, ok := src.Extent(s.Ops); ok {
				opsHi = math.Max(opsHi, hi)
			}
			if lo, hi, ok := src.Extent(positive(s.PingP99), positive(s.PingMax)); ok {
				pingLo, pingHi = math.Min(pingLo, lo), math.Max(pingHi, hi)
			}
		}
	}
	sc := scales{mem: bytesScale(0, math.Max(memHi, 1)), ops: countScale(math.Max(opsHi, 1))}
	if pingHi <= 0 {
		pingLo, pingHi = 0.1, 1
	}
	sc.pingLo, sc.pingHi = logRange(pingLo, pingHi)
	if sc.pingHi/sc.pingLo < 10 {
		// Less than a decade shows one tick at most: widen to one.
		sc.pingLo = sc.pingHi / 10
	}
	return sc
}
