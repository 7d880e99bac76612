// Package plot is what a pane and a fleet row chart alike: the chart
// table (Charts: one entry per chart, from which the layout, the labels,
// the scales, the colours and the golden files follow), the columns a
// node's history falls into, round scales held between frames, and the
// drawing of each chart through ui/chart.
//
// A chart of latest_fork_usec would be one more entry in Charts reading
// s.Info.LatestForkUsec, Unit UnitLatency. The recording needs nothing:
// it carries whole samples, which replay feeds to the same table.
package plot

import (
	"fmt"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
)

// Unit says how a chart's values read.
type Unit int

const (
	UnitBytes   Unit = iota // bytes, shown in binary units
	UnitRate                // per second, with k/M suffixes
	UnitLatency             // nanoseconds, shown in µs/ms/s
)

// Format renders a value of the unit.
func (u Unit) Format(v float64) string {
	switch u {
	case UnitBytes:
		return text.Bytes(int64(v))
	case UnitRate:
		return text.Rate(v)
	}
	return text.Latency(time.Duration(v))
}

// DrawKind says how a chart draws its values.
type DrawKind int

const (
	DrawLine DrawKind = iota // a braille line: levels and trends (memory, latency)
	DrawBars                 // block columns: amounts per interval (ops/s)
)

// Chart is one entry of the chart table: what it reads from a sample,
// how it reads and draws, and where it stands among the others.
type Chart struct {
	ID    string // stable name, for tests and the README
	Label string // on screen, at most 9 cells
	Unit  Unit
	// Value reads the chart's figure from a sample; false when the sample lacks
	// it (absent is not zero: nothing is drawn).
	Value func(s *source.Sample) (float64, bool)
	// From names the instrument a sample's value came from: a short tag
	// for a one-row label and a longer form.
	From func(s *source.Sample) (tag, long string)
	// Current is the value as the label shows it (default: the unit's
	// format of Value, or n/a).
	Current func(s *source.Sample) string
	// Notes are extra label lines, when the chart has rows for them.
	Notes func(st *style.Styles, s *source.Sample) []string
	Color lipgloss.AdaptiveColor
	Draw  DrawKind
	// Group is the scale group: the charts of one group share their
	// scale (the same memory is drawn at the same height in used, rss and
	// footprint), across panes too unless scales are per pane.
	Group string
	// Rank orders the charts by how much they matter: when a pane is short
	// of rows, the lowest ranks stay.
	Rank int
	// Weight is the chart's share of a pane's spare rows: the charts that
	// tell what a save costs grow the most.
	Weight int
}

// Charts is the chart table: the charts, top to bottom.
var Charts = []Chart{
	{
		ID: "footprint", Label: "footprint", Unit: UnitBytes, Group: "memory", Rank: 1, Weight: 3, Draw: DrawLine,
		Value: optInt(func(s *source.Sample) source.Opt[int64] { return s.Footprint }),
		From: func(s *source.Sample) (string, string) {
			return instrument(s.FootprintFrom, "rss + fork child's cow", "INFO rss + current cow")
		},
		Notes: footprintNotes,
		Color: lipgloss.AdaptiveColor{Light: "#AF0000", Dark: "#FF5F87"},
	},
	{
		ID: "cow", Label: "cow", Unit: UnitBytes, Group: "cow", Rank: 2, Weight: 3, Draw: DrawLine,
		Value: optInt(func(s *source.Sample) source.Opt[int64] { return s.COW }),
		From: func(s *source.Sample) (string, string) {
			return instrument(s.COWFrom, "copied pages (/proc)", "INFO current_cow_size")
		},
		Current: func(s *source.Sample) string {
			if v, ok := s.COW.Get(); ok && v == 0 && s.Save == nil {
				return "idle"
			}
			if s.Save != nil && s.Save.Kind.Method() == "forkless" {
				return "none" // no child copies anything: not the instrument's 0
			}
			return text.OptBytes(s.COW)
		},
		Notes: cowNotes,
		Color: lipgloss.AdaptiveColor{Light: "#AF5F00", Dark: "#FFAF5F"},
	},
	{
		ID: "rss", Label: "rss", Unit: UnitBytes, Group: "memory", Rank: 5, Weight: 1, Draw: DrawLine,
		Value: optInt(func(s *source.Sample) source.Opt[int64] { return s.Info.RSS }),
		From:  fixedFrom("info", "INFO used_memory_rss"),
		Notes: func(st *style.Styles, s *source.Sample) []string {
			if !s.Proc.RSS.OK {
				return nil
			}
			return []string{st.Label.R("/proc ") + st.Value.R(text.Bytes(s.Proc.RSS.V)) +
				st.Label.R(" pss ") + st.Value.R(text.OptBytes(s.Proc.PSS))}
		},
		Color: lipgloss.AdaptiveColor{Light: "#008787", Dark: "#5FD7D7"},
	},
	{
		ID: "used", Label: "used", Unit: UnitBytes, Group: "memory", Rank: 6, Weight: 1, Draw: DrawLine,
		Value: optInt(func(s *source.Sample) source.Opt[int64] { return s.Info.UsedMemory }),
		From:  fixedFrom("info", "INFO used_memory"),
		Color: lipgloss.AdaptiveColor{Light: "#005FAF", Dark: "#5FAFFF"},
	},
	{
		ID: "ops", Label: "ops/s", Unit: UnitRate, Group: "ops", Rank: 3, Weight: 2, Draw: DrawBars,
		Value: func(s *source.Sample) (float64, bool) { return s.OpsPerSec.Get() },
		From:  fixedFrom("info", "commands/s from INFO"),
		Notes: func(st *style.Styles, s *source.Sample) []string {
			if w, ok := s.WriterOpsPerSec.Get(); ok {
				return []string{st.Label.R("writers ") + st.Value.R(text.Rate(w)+"/s")}
			}
			return nil
		},
		Color: lipgloss.AdaptiveColor{Light: "#008700", Dark: "#87D75F"},
	},
	{
		ID: "ping", Label: "ping", Unit: UnitLatency, Group: "ping", Rank: 4, Weight: 2, Draw: DrawLine,
		Value: func(s *source.Sample) (float64, bool) {
			w, ok := worstPing(s)
			return float64(w), ok
		},
		From:  fixedFrom("PING", "worst PING per sample"),
		Color: lipgloss.AdaptiveColor{Light: "#AF0087", Dark: "#FF87D7"},
	},
}

// StoreColumns are what the store keeps of each sample: one column per
// chart, by index, read by Columns.Fill.
func StoreColumns() []store.Column {
	out := make([]store.Column, len(Charts))
	for i := range Charts {
		out[i] = Charts[i].Value
	}
	return out
}

// optInt adapts a byte figure to Chart.Value.
func optInt(get func(s *source.Sample) source.Opt[int64]) func(*source.Sample) (float64, bool) {
	return func(s *source.Sample) (float64, bool) {
		v, ok := get(s).Get()
		return float64(v), ok
	}
}

// fixedFrom is the From of a chart that always has one instrument.
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
func footprintNotes(st *style.Styles, s *source.Sample) []string {
	u, ok := s.Proc.CgroupUsage.Get()
	if !ok {
		return nil
	}
	limit := st.Label.R(", no max")
	if l, ok := s.Proc.CgroupLimit.Get(); ok {
		limit = st.Label.R("/") + st.Value.R(text.Bytes(l))
	}
	return []string{st.Label.R("cgroup ") + st.Value.R(text.Bytes(u)) + limit}
}

// cowNotes show the other instrument beside the charted one, where both
// read: two unrelated instruments that should agree.
func cowNotes(st *style.Styles, s *source.Sample) []string {
	switch {
	case s.COWFrom == source.FromProc && s.Save != nil && s.Save.LiveCOW.OK:
		return []string{st.Label.R("INFO ") + st.Value.R(text.Bytes(s.Save.LiveCOW.V))}
	case s.COWFrom != source.FromProc && s.Proc.ChildPrivateDirty.OK:
		return []string{st.Label.R("/proc ") + st.Value.R(text.Bytes(s.Proc.ChildPrivateDirty.V))}
	case s.COWFrom == source.FromInfo && s.Save != nil && s.Info.CurrentCOWAge.OK:
		// No /proc figure: INFO's is all there is, and the server
		// refreshes it about once a second; say how old it is.
		return []string{st.Label.R("INFO figure ") + st.Value.R(fmt.Sprintf("%ds old", s.Info.CurrentCOWAge.V))}
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

// CurrentText is what a chart's label says its figure is now.
func (mt *Chart) CurrentText(s *source.Sample) string {
	if s == nil {
		return text.NA
	}
	if mt.Current != nil {
		return mt.Current(s)
	}
	if v, ok := mt.Value(s); ok {
		return mt.Unit.Format(v)
	}
	return text.NA
}

// MinTop is the smallest scale top of a unit: a chart of nothing but
// zeros still needs a scale, and a page (a 5 KiB top), ten ops or one
// microsecond is the least that means anything.
func (u Unit) MinTop() float64 {
	switch u {
	case UnitBytes:
		return 4096
	case UnitRate:
		return 10
	}
	return float64(time.Microsecond)
}

// groups lists the scale groups in table order.
func groups() []string {
	var out []string
	seen := map[string]bool{}
	for _, mt := range Charts {
		if !seen[mt.Group] {
			seen[mt.Group] = true
			out = append(out, mt.Group)
		}
	}
	return out
}

// The indexes of the charts the drawing names, looked up once.
var (
	COWChart  = Index("cow")
	PingChart = Index("ping")
)

// Index returns the index of the chart with id; it panics when
// there is none. Lookups at draw time use the variables above.
func Index(id string) int {
	for i, mt := range Charts {
		if mt.ID == id {
			return i
		}
	}
	panic(fmt.Sprintf("no chart %q", id))
}

// Colours are the charts' colours, in table order: style.New makes a
// series paint of each.
func Colours() []lipgloss.TerminalColor {
	out := make([]lipgloss.TerminalColor, len(Charts))
	for i := range Charts {
		out[i] = Charts[i].Color
	}
	return out
}

// Styles are the screen's styles with the charts' colours (style.New).
func Styles(ascii bool) style.Styles { return style.New(ascii, Colours()...) }
