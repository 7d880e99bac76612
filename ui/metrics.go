package ui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
)

// The metric table: every chart of a pane is one entry here, and the
// layout, the labels, the scales, the colours and the golden files follow
// from it. A chart of latest_fork_usec would be one more entry reading
// s.Info.LatestForkUsec, unit unitLatency. The recording needs nothing:
// it carries whole samples, which replay feeds to the same table.

// unit says how a metric's values read.
type unit int

const (
	unitBytes   unit = iota // bytes, shown in binary units
	unitRate                // per second, with k/M suffixes
	unitLatency             // nanoseconds, shown in µs/ms/s
)

// format renders a value of the unit.
func (u unit) format(v float64) string {
	switch u {
	case unitBytes:
		return fmtBytes(int64(v))
	case unitRate:
		return fmtRate(v)
	}
	return fmtLatency(time.Duration(v))
}

// drawKind says how a chart draws its values.
type drawKind int

const (
	drawLine drawKind = iota // a braille line: levels and trends (memory, latency)
	drawBars                 // block columns: amounts per interval (ops/s)
)

// metric is one chart.
type metric struct {
	id    string // stable name, for tests and the README
	label string // on screen, at most 9 cells
	unit  unit
	// value reads the metric from a sample; false when the sample lacks
	// it (absent is not zero: nothing is drawn).
	value func(s *source.Sample) (float64, bool)
	// from names the instrument a sample's value came from: a short tag
	// for a one-row label and a longer form.
	from func(s *source.Sample) (tag, long string)
	// current is the value as the label shows it (default: the unit's
	// format of value, or n/a).
	current func(s *source.Sample) string
	// notes are extra label lines, when the chart has rows for them.
	notes func(st *styles, s *source.Sample) []string
	color lipgloss.AdaptiveColor
	draw  drawKind
	// group is the scale group: the charts of one group share their
	// scale (the same memory is drawn at the same height in used, rss and
	// footprint), across panes too unless scales are per pane.
	group string
	// rank orders the charts by how much they matter: when a pane is short
	// of rows, the lowest ranks stay.
	rank int
	// weight is the chart's share of a pane's spare rows: the charts that
	// tell what a save costs grow the most.
	weight int
}

// metrics are the charts, top to bottom.
var metrics = []metric{
	{
		id: "footprint", label: "footprint", unit: unitBytes, group: "memory", rank: 1, weight: 3, draw: drawLine,
		value: optInt(func(s *source.Sample) source.Opt[int64] { return s.Footprint }),
		from: func(s *source.Sample) (string, string) {
			return instrument(s.FootprintFrom, "/proc rss+child dirty", "INFO rss+cow estimate")
		},
		notes: footprintNotes,
		color: lipgloss.AdaptiveColor{Light: "#AF0000", Dark: "#FF5F87"},
	},
	{
		id: "cow", label: "cow", unit: unitBytes, group: "cow", rank: 2, weight: 3, draw: drawLine,
		value: optInt(func(s *source.Sample) source.Opt[int64] { return s.COW }),
		from: func(s *source.Sample) (string, string) {
			return instrument(s.COWFrom, "/proc child dirty", "INFO current_cow_size")
		},
		current: func(s *source.Sample) string {
			if v, ok := s.COW.Get(); ok && v == 0 && s.Save == nil {
				return "idle"
			}
			return fmtOptBytes(s.COW)
		},
		notes: cowNotes,
		color: lipgloss.AdaptiveColor{Light: "#AF5F00", Dark: "#FFAF5F"},
	},
	{
		id: "rss", label: "rss", unit: unitBytes, group: "memory", rank: 5, weight: 1, draw: drawLine,
		value: optInt(func(s *source.Sample) source.Opt[int64] { return s.Info.RSS }),
		from:  fixedFrom("info", "INFO used_memory_rss"),
		notes: func(st *styles, s *source.Sample) []string {
			if !s.Proc.RSS.OK {
				return nil
			}
			return []string{st.label.r("/proc ") + st.value.r(fmtBytes(s.Proc.RSS.V)) +
				st.label.r(" pss ") + st.value.r(fmtOptBytes(s.Proc.PSS))}
		},
		color: lipgloss.AdaptiveColor{Light: "#008787", Dark: "#5FD7D7"},
	},
	{
		id: "used", label: "used", unit: unitBytes, group: "memory", rank: 6, weight: 1, draw: drawLine,
		value: optInt(func(s *source.Sample) source.Opt[int64] { return s.Info.UsedMemory }),
		from:  fixedFrom("info", "INFO used_memory"),
		color: lipgloss.AdaptiveColor{Light: "#005FAF", Dark: "#5FAFFF"},
	},
	{
		id: "ops", label: "ops/s", unit: unitRate, group: "ops", rank: 3, weight: 2, draw: drawBars,
		value: func(s *source.Sample) (float64, bool) { return s.OpsPerSec.Get() },
		from:  fixedFrom("info", "INFO commands Δ"),
		notes: func(st *styles, s *source.Sample) []string {
			if w, ok := s.WriterOpsPerSec.Get(); ok {
				return []string{st.label.r("writers ") + st.value.r(fmtRate(w)+"/s")}
			}
			return nil
		},
		color: lipgloss.AdaptiveColor{Light: "#008700", Dark: "#87D75F"},
	},
	{
		id: "ping", label: "ping", unit: unitLatency, group: "ping", rank: 4, weight: 2, draw: drawLine,
		value: func(s *source.Sample) (float64, bool) {
			w, ok := worstPing(s)
			return float64(w), ok
		},
		from:  fixedFrom("PING", "worst PING of interval"),
		color: lipgloss.AdaptiveColor{Light: "#AF0087", Dark: "#FF87D7"},
	},
}

// metricColumns are what the store keeps of each sample: one column per
// metric, by index, read by pane.fill.
func metricColumns() []store.Column {
	out := make([]store.Column, len(metrics))
	for i := range metrics {
		out[i] = metrics[i].value
	}
	return out
}

// optInt adapts a byte figure to metric.value.
func optInt(get func(s *source.Sample) source.Opt[int64]) func(*source.Sample) (float64, bool) {
	return func(s *source.Sample) (float64, bool) {
		v, ok := get(s).Get()
		return float64(v), ok
	}
}

// fixedFrom is the from of a metric that always has one instrument.
func fixedFrom(tag, long string) func(*source.Sample) (string, string) {
	return func(*source.Sample) (string, string) { return tag, long }
}

// instrument names where a figure came from, by what the sample says.
func instrument(from source.Instrument, proc, info string) (string, string) {
	switch from {
	case source.FromProc:
		return "proc", proc
	case source.FromInfo:
		return "info", info
	}
	return "", ""
}

// footprintNotes is the memory cgroup the server runs in: what a
// container's OOM killer counts, against its limit.
func footprintNotes(st *styles, s *source.Sample) []string {
	u, ok := s.Proc.CgroupUsage.Get()
	if !ok {
		return nil
	}
	limit := ", no limit"
	if l, ok := s.Proc.CgroupLimit.Get(); ok {
		limit = " of " + fmtBytes(l)
	}
	return []string{st.label.r("cgroup ") + st.value.r(fmtBytes(u)) + st.label.r(limit)}
}

// cowNotes show the other instrument beside the charted one, where both
// read: two unrelated instruments that should agree.
func cowNotes(st *styles, s *source.Sample) []string {
	switch {
	case s.COWFrom == source.FromProc && s.Save != nil && s.Save.LiveCOW.OK:
		return []string{st.label.r("INFO ") + st.value.r(fmtBytes(s.Save.LiveCOW.V))}
	case s.COWFrom != source.FromProc && s.Proc.ChildPrivateDirty.OK:
		return []string{st.label.r("child dirty ") + st.value.r(fmtBytes(s.Proc.ChildPrivateDirty.V))}
	case s.COWFrom == source.FromInfo && s.Save != nil && s.Info.CurrentCOWAge.OK:
		// No /proc figure: INFO's is all there is, and the server
		// refreshes it about once a second; say how old it is.
		return []string{st.label.r("INFO figure ") + st.value.r(fmt.Sprintf("%ds old", s.Info.CurrentCOWAge.V)) +
			st.dim.r(" (current_cow_size_age)")}
	}
	return nil
}

// worstPing is the worst PING of the sample's interval, counting one still in
// flight so a stall shows while it lasts. Absent when no PING completed or
// waited during the interval.
func worstPing(s *source.Sample) (time.Duration, bool) {
	if s.Ping.Count == 0 && s.Ping.InFlight == 0 {
		return 0, false
	}
	return s.Ping.Worst(), true
}

// currentText is what a chart's label says the metric is now.
func (mt *metric) currentText(s *source.Sample) string {
	if s == nil {
		return na
	}
	if mt.current != nil {
		return mt.current(s)
	}
	if v, ok := mt.value(s); ok {
		return mt.unit.format(v)
	}
	return na
}

// minTop is the smallest scale top of a unit: a chart of nothing but
// zeros still needs a scale, and a page (a 5 KiB top), ten ops or one
// microsecond is the least that means anything.
func (u unit) minTop() float64 {
	switch u {
	case unitBytes:
		return 4096
	case unitRate:
		return 10
	}
	return float64(time.Microsecond)
}

// groups lists the scale groups in table order.
func groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, mt := range metrics {
		if !seen[mt.group] {
			seen[mt.group] = true
			out = append(out, mt.group)
		}
	}
	return out
}

// The indexes of the metrics the drawing names, looked up once.
var (
	cowMetric  = metricIndex("cow")
	pingMetric = metricIndex("ping")
)

// metricIndex returns the index of the metric with id; it panics when
// there is none. Lookups at draw time use the variables above.
func metricIndex(id string) int {
	for i, mt := range metrics {
		if mt.id == id {
			return i
		}
	}
	panic(fmt.Sprintf("no metric %q", id))
}
