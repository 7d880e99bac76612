package ui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestGolden pins whole frames at fixed sizes. The event timeline and the
// clock are fixed and the colour profile is Ascii (TestMain), so a frame
// only changes when the drawing does; regenerate with
// go test ./ui -run TestGolden -update and review the diff.
func TestGolden(t *testing.T) {
	sec := time.Second
	cases := []struct {
		name    string
		servers []string
		w, h    int
		events  func() []source.Event
		keys    []string
	}{
		{"one_pane_120x40_after_save", []string{uitest.AddrA}, 120, 40, func() []source.Event { return uitest.Scenario(1, 60*sec) }, nil},
		{"two_panes_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, func() []source.Event { return uitest.Scenario(2, 60*sec) }, nil},
		{"two_panes_stacked_100x50", []string{uitest.AddrA, uitest.AddrB}, 100, 50, func() []source.Event { return uitest.Scenario(2, 60*sec) }, nil},
		{"two_panes_80x24", []string{uitest.AddrA, uitest.AddrB}, 80, 24, func() []source.Event { return uitest.Scenario(2, 60*sec) }, []string{"tab"}},
		{"two_panes_120x40", []string{uitest.AddrA, uitest.AddrB}, 120, 40, func() []source.Event { return uitest.Scenario(2, 60*sec) }, nil},
		{"two_panes_200x60", []string{uitest.AddrA, uitest.AddrB}, 200, 60, func() []source.Event { return uitest.Scenario(2, 60*sec) }, nil},
		{"two_panes_80x16_one_shown", []string{uitest.AddrA, uitest.AddrB}, 80, 16, func() []source.Event { return uitest.Scenario(2, 60*sec) }, []string{"tab"}},
		{"too_small_50x11", []string{uitest.AddrA, uitest.AddrB}, 50, 11, func() []source.Event { return uitest.Scenario(2, 10*sec) }, nil},
		{"shared_scale_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, cowScenario, nil},
		{"per_pane_scales_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, cowScenario, []string{"s"}},
		{"cost_curves_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, uitest.TwoSaves, []string{"c"}},
		{"cost_curves_footprint_120x40", []string{uitest.AddrA, uitest.AddrB}, 120, 40, uitest.TwoSaves, []string{"c", "y"}},
		{"cost_curves_80x24", []string{uitest.AddrA, uitest.AddrB}, 80, 24, uitest.TwoSaves, []string{"c"}},
		{"cost_curves_none_80x24", []string{uitest.AddrA, uitest.AddrB}, 80, 24, func() []source.Event { return uitest.Scenario(2, 10*sec) }, []string{"c"}},
		{"during_save_120x40", []string{uitest.AddrA}, 120, 40, func() []source.Event { return uitest.Scenario(1, 28*sec) }, nil},
		{"disconnected_120x40", []string{uitest.AddrA}, 120, 40, disconnectScenario, nil},
		{"absent_fields_120x40", []string{uitest.AddrA}, 120, 40, absentScenario, nil},
		{"full_help_paused_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, func() []source.Event { return uitest.Scenario(2, 60*sec) }, []string{"p", "?"}},
		{"reports_table_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, func() []source.Event { return uitest.ReportsScenario(8) }, []string{"r"}},
		{"reports_table_80x24_scrolled", []string{uitest.AddrA, uitest.AddrB}, 80, 24, func() []source.Event { return uitest.ReportsScenario(30) }, []string{"r", "up", "up"}},
		{"reports_table_full_help_120x40", []string{uitest.AddrA, uitest.AddrB}, 120, 40, func() []source.Event { return uitest.ReportsScenario(3) }, []string{"r", "?"}},
		{"reports_table_empty_120x40", []string{uitest.AddrA}, 120, 40, func() []source.Event { return uitest.Scenario(1, 10*sec) }, []string{"r"}},
		{"fork_warning_120x40", []string{uitest.AddrA, uitest.AddrB}, 120, 40, riskyScenario, []string{"b"}},
		{"footer_answers_200x50", []string{uitest.AddrA, uitest.AddrB}, 200, 50, func() []source.Event {
			evs := uitest.Scenario(2, 40*sec)
			return append(evs, commandEvent(0, 40*sec, "BGSAVE", "Background saving started", ""),
				commandEvent(1, 40*sec, "BGSAVE", "", "ERR Background save already in progress"))
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := sized(newTestModel(tc.servers...), tc.w, tc.h)
			m = feed(t, m, tc.events())
			for _, k := range tc.keys {
				m, _ = press(m, k)
			}
			golden.RequireEqual(t, m.View())
		})
	}
}

// disconnectScenario: connected 0-15s, down 15-22s, back, then down again
// from 45s to the end (60s).
func disconnectScenario() []source.Event {
	var s uitest.Script
	a := uitest.NewFake(0, false)
	s.Add(a.Connected(0))
	s.Run(a, 0, 15*time.Second, nil)
	s.Add(a.Disconnected(15*time.Second, "read tcp 127.0.0.1:51234->127.0.0.1:7001: connection reset by peer"))
	s.Add(a.Connected(22 * time.Second))
	s.Run(a, 22*time.Second, 45*time.Second, nil)
	s.Add(a.Disconnected(45*time.Second, "dial tcp 127.0.0.1:7001: connect: connection refused"))
	// The other server's events keep the clock moving while this one is down.
	s.Add(source.Event{Node: uitest.NodeOf(1), Kind: source.EventSample, Offset: 60 * time.Second})
	return s.Events
}

// absentScenario is an old server that reports next to nothing, with a save
// report whose optional fields are all absent.
func absentScenario() []source.Event {
	var s uitest.Script
	a := uitest.NewFake(0, false)
	a.Absent = true
	s.Add(a.Connected(0))
	s.Run(a, 0, 30*time.Second, nil)
	s.Add(source.Event{Node: uitest.NodeOf(0), Kind: source.EventSaveEnded, Offset: 30 * time.Second,
		Report: &source.SaveReport{Node: uitest.NodeOf(0), Addr: uitest.AddrA, Kind: source.SaveFork, Started: 25 * time.Second, Ended: 29 * time.Second, Observed: 4 * time.Second}})
	return s.Events
}

func commandEvent(server int, off time.Duration, cmd, reply, err string) source.Event {
	return source.Event{Node: uitest.NodeOf(server), Kind: source.EventCommand, Offset: off, At: uitest.Epoch.Add(off),
		Command: &source.CommandResult{Command: cmd, Reply: reply, Err: err, Sent: off - 3*time.Millisecond, Done: off}}
}
