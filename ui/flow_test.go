package ui

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestProgramFlow runs the model in a real bubbletea program: events come in
// through Program.Send as the wiring sends them, a key press sends BGSAVE
// through Config.Send, and the answer comes back as an event, like the
// watcher's. Only the server is fake here.
func TestProgramFlow(t *testing.T) {
	var tm *teatest.TestModel
	var log sendLog
	cfg := Config{
		Nodes: nodes(uitest.AddrA, uitest.AddrB),
		Now:   uitest.FixedNow,
		Send: func(node source.NodeID, args ...string) {
			log.send(node, args...)
			server := slices.Index([]string{uitest.AddrA, uitest.AddrB}, string(node))
			reply, errText := "Background saving started", ""
			if server == 1 {
				reply, errText = "", "ERR Background save already in progress"
			}
			tm.Send(EventMsg(commandEvent(server, 61*time.Second, args[0], reply, errText)))
		},
	}
	tm = teatest.NewTestModel(t, New(cfg), teatest.WithInitialTermSize(200, 50))

	var sc screen
	evs := uitest.Scenario(2, 60*time.Second)
	for i := 0; i < len(evs); i += 25 {
		tm.Send(EventsMsg(evs[i:min(i+25, len(evs))]))
	}
	sc.waitFor(t, tm, "last save BGSAVE fork")

	tm.Type("B")
	sc.waitFor(t, tm, "BGSAVE on "+uitest.AddrA+": Background saving started")
	sc.waitFor(t, tm, "BGSAVE on "+uitest.AddrB+": ERR Background save already in progress")

	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final := tm.FinalModel(t).(Model)
	if got := final.Reports(); len(got) != 1 || got[0].Kind != source.SaveFork {
		t.Errorf("final model reports %+v", got)
	}
	if got := log.got(); len(got) != 2 || got[0] != "0 BGSAVE" || got[1] != "1 BGSAVE" {
		t.Errorf("sent %v", got)
	}
}

// screen accumulates what the program drew, so several waits can look for
// things drawn in the same frame.
type screen struct{ seen []byte }

// waitFor waits, with a generous deadline, until the program has drawn s.
func (sc *screen) waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	var last []byte
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		last = b
		return bytes.Contains(append(sc.seen[:len(sc.seen):len(sc.seen)], b...), []byte(s))
	}, teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	sc.seen = append(sc.seen, last...)
}
