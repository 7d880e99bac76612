package ui

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/source"
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
		{"one_pane_120x40_after_save", []string{addrA}, 120, 40, func() []source.Event { return scenario(1, 60*sec) }, nil},
		{"two_panes_200x50", []string{addrA, addrB}, 200, 50, func() []source.Event { return scenario(2, 60*sec) }, nil},
		{"two_panes_stacked_100x50", []string{addrA, addrB}, 100, 50, func() []source.Event { return scenario(2, 60*sec) }, nil},
		{"two_panes_80x24", []string{addrA, addrB}, 80, 24, func() []source.Event { return scenario(2, 60*sec) }, []string{"tab"}},
		{"two_panes_120x40", []string{addrA, addrB}, 120, 40, func() []source.Event { return scenario(2, 60*sec) }, nil},
		{"two_panes_200x60", []string{addrA, addrB}, 200, 60, func() []source.Event { return scenario(2, 60*sec) }, nil},
		{"two_panes_80x16_one_shown", []string{addrA, addrB}, 80, 16, func() []source.Event { return scenario(2, 60*sec) }, []string{"tab"}},
		{"too_small_50x11", []string{addrA, addrB}, 50, 11, func() []source.Event { return scenario(2, 10*sec) }, nil},
		{"shared_scale_200x50", []string{addrA, addrB}, 200, 50, cowScenario, nil},
		{"per_pane_scales_200x50", []string{addrA, addrB}, 200, 50, cowScenario, []string{"s"}},
		{"cost_curves_200x50", []string{addrA, addrB}, 200, 50, twoSaves, []string{"c"}},
		{"cost_curves_footprint_120x40", []string{addrA, addrB}, 120, 40, twoSaves, []string{"c", "y"}},
		{"cost_curves_80x24", []string{addrA, addrB}, 80, 24, twoSaves, []string{"c"}},
		{"cost_curves_none_80x24", []string{addrA, addrB}, 80, 24, func() []source.Event { return scenario(2, 10*sec) }, []string{"c"}},
		{"during_save_120x40", []string{addrA}, 120, 40, func() []source.Event { return scenario(1, 28*sec) }, nil},
		{"disconnected_120x40", []string{addrA}, 120, 40, disconnectScenario, nil},
		{"absent_fields_120x40", []string{addrA}, 120, 40, absentScenario, nil},
		{"full_help_paused_200x50", []string{addrA, addrB}, 200, 50, func() []source.Event { return scenario(2, 60*sec) }, []string{"p", "?"}},
		{"reports_table_200x50", []string{addrA, addrB}, 200, 50, func() []source.Event { return reportsScenario(8) }, []string{"r"}},
		{"reports_table_80x24_scrolled", []string{addrA, addrB}, 80, 24, func() []source.Event { return reportsScenario(30) }, []string{"r", "up", "up"}},
		{"reports_table_full_help_120x40", []string{addrA, addrB}, 120, 40, func() []source.Event { return reportsScenario(3) }, []string{"r", "?"}},
		{"reports_table_empty_120x40", []string{addrA}, 120, 40, func() []source.Event { return scenario(1, 10*sec) }, []string{"r"}},
		{"fork_warning_120x40", []string{addrA, addrB}, 120, 40, riskyScenario, []string{"b"}},
		{"footer_answers_200x50", []string{addrA, addrB}, 200, 50, func() []source.Event {
			evs := scenario(2, 40*sec)
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
	var s script
	a := newFake(0, false)
	s.add(a.connected(0))
	s.run(a, 0, 15*time.Second, nil)
	s.add(a.disconnected(15*time.Second, "read tcp 127.0.0.1:51234->127.0.0.1:7001: connection reset by peer"))
	s.add(a.connected(22 * time.Second))
	s.run(a, 22*time.Second, 45*time.Second, nil)
	s.add(a.disconnected(45*time.Second, "dial tcp 127.0.0.1:7001: connect: connection refused"))
	// The other server's events keep the clock moving while this one is down.
	s.add(source.Event{Node: nodeOf(1), Kind: source.EventSample, Offset: 60 * time.Second})
	return s.events
}

// absentScenario is an old server that reports next to nothing, with a save
// report whose optional fields are all absent.
func absentScenario() []source.Event {
	var s script
	a := newFake(0, false)
	a.absent = true
	s.add(a.connected(0))
	s.run(a, 0, 30*time.Second, nil)
	s.add(source.Event{Node: nodeOf(0), Kind: source.EventSaveEnded, Offset: 30 * time.Second,
		Report: &source.SaveReport{Node: nodeOf(0), Addr: addrA, Kind: source.SaveFork, Started: 25 * time.Second, Ended: 29 * time.Second, Observed: 4 * time.Second}})
	return s.events
}

func commandEvent(server int, off time.Duration, cmd, reply, err string) source.Event {
	return source.Event{Node: nodeOf(server), Kind: source.EventCommand, Offset: off, At: epoch.Add(off),
		Command: &source.CommandResult{Command: cmd, Reply: reply, Err: err, Sent: off - 3*time.Millisecond, Done: off}}
}
