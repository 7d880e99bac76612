package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestCancelSaveAsksFirst: x sends nothing at first; it says what it would
// cancel (the running save and how far it got) and how to confirm. x again
// sends BGSAVE CANCEL to the focused server alone.
func TestCancelSaveAsksFirst(t *testing.T) {
	var log sendLog
	// Server A's fork save runs from 20 s to 35 s: at 28 s it is half done.
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, valkeyScenario(2, 28*time.Second))
	m, cmd := press(m, "x")
	if n := run(t, cmd); n != 0 || len(log.got()) != 0 {
		t.Fatalf("first x sent %v", log.got())
	}
	foot := lineWith(t, m, "press x again to send BGSAVE CANCEL")
	if !strings.Contains(foot, "cancel the BGSAVE fork running on "+uitest.AddrA) || !strings.Contains(foot, "% done)?") {
		t.Errorf("footer %q does not say which save", foot)
	}
	if !strings.Contains(plainView(m), "x again: send BGSAVE CANCEL • any other key: keep it") {
		t.Errorf("help line does not say how to confirm:\n%s", plainView(m))
	}
	m, cmd = press(m, "x")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGSAVE CANCEL"}) {
		t.Fatalf("second x: ran %d, sent %v", n, log.got())
	}
	if !strings.Contains(plainView(m), "sending BGSAVE CANCEL to "+uitest.AddrA) {
		t.Errorf("no sending note:\n%s", plainView(m))
	}
}

// TestCancelSaveOtherKeyKeeps: any other key after x keeps the save: it is
// not sent, and a later x asks again.
func TestCancelSaveOtherKeyKeeps(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: log.send}, 120, 40, valkeyScenario(1, 28*time.Second))
	m, _ = press(m, "x")
	m, cmd := press(m, "z")
	run(t, cmd)
	if len(log.got()) != 0 || m.confirm.key.Enabled() || strings.Contains(plainView(m), "press x again") {
		t.Fatalf("z after x: sent %v, confirm %q", log.got(), m.confirm.key.Keys())
	}
	m, cmd = press(m, "x")
	run(t, cmd)
	if len(log.got()) != 0 || !strings.Contains(plainView(m), "press x again") {
		t.Fatalf("x after a kept save should ask again, sent %v", log.got())
	}
	// b is not x: it drops the cancel and does what b does.
	m, cmd = press(m, "b")
	run(t, cmd)
	if !slices.Equal(log.got(), []string{"0 BGSAVE"}) {
		t.Fatalf("b after x sent %v", log.got())
	}
}

// TestCancelSaveNothingRunning: with no save running x still asks (a save
// may be scheduled behind an AOF rewrite), and says none is running.
func TestCancelSaveNothingRunning(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: log.send}, 120, 40, valkeyScenario(1, 10*time.Second))
	m, _ = press(m, "x")
	if !strings.Contains(lineWith(t, m, "press x again"), "no RDB save is running on "+uitest.AddrA+" (a scheduled one would be cancelled); press x again") {
		t.Errorf("footer:\n%s", plainView(m))
	}
}

// TestCancelSaveAnswers: the footer shows each answer Valkey 8.1+ gives
// (src/rdb.c), and Redis's, as the server wrote it.
func TestCancelSaveAnswers(t *testing.T) {
	for _, c := range []struct{ reply, err, want string }{
		{"Background saving cancelled", "", "BGSAVE CANCEL on " + uitest.AddrA + ": Background saving cancelled"},
		{"Scheduled background saving cancelled", "", "BGSAVE CANCEL on " + uitest.AddrA + ": Scheduled background saving cancelled"},
		{"", "ERR Background saving is currently not in progress or scheduled",
			"✗ BGSAVE CANCEL on " + uitest.AddrA + ": ERR Background saving is currently not in progress or scheduled"},
		{"", "ERR syntax error", "✗ BGSAVE CANCEL on " + uitest.AddrA + ": ERR syntax error"},
	} {
		m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 200, 50, uitest.Scenario(1, 28*time.Second))
		m = feed(t, m, []source.Event{commandEvent(0, 28*time.Second, "BGSAVE CANCEL", c.reply, c.err)})
		if !strings.Contains(plainView(m), c.want) {
			t.Errorf("answer %q%q: footer lacks %q:\n%s", c.reply, c.err, c.want, plainView(m))
		}
	}
}

// TestCancelSaveReadOnly: a read-only monitor refuses x with a note.
func TestCancelSaveReadOnly(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA), Send: log.send, ReadOnly: true}, 120, 40, uitest.Scenario(1, 28*time.Second))
	m, cmd := press(m, "x")
	run(t, cmd)
	if len(log.got()) != 0 || !strings.Contains(plainView(m), "read-only: BGSAVE CANCEL not sent") {
		t.Fatalf("read-only x: sent %v\n%s", log.got(), plainView(m))
	}
}

// TestCancelledReportReads: a cancelled save reads "cancelled" in the
// last-save block and the table, not as a failure ("✗").
func TestCancelledReportReads(t *testing.T) {
	evs := uitest.Scripted(uitest.NewFake(0, false), 30*time.Second, source.SaveFork, uitest.Span{Start: 20 * time.Second, End: 25 * time.Second})
	for _, ev := range evs {
		if ev.Kind == source.EventSaveEnded {
			ev.Report.Status = source.StatusCancelled
		}
	}
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 200, 50, evs)
	last := lineWith(t, m, "last save")
	if !strings.Contains(last, "cancelled") || strings.Contains(last, "✗") {
		t.Errorf("last save line %q", last)
	}
	m, _ = press(m, "r")
	if v := plainView(m); !strings.Contains(v, "cancelled") || strings.Contains(v, "✗ cancelled") {
		t.Errorf("table:\n%s", v)
	}
}

// valkeyScenario is scenario with server A a Valkey 9.2 (which has BGSAVE
// CANCEL) running the same fork save.
func valkeyScenario(servers int, until time.Duration) []source.Event {
	a := uitest.Scripted(uitest.NewFake(0, true), until, source.SaveFork, uitest.Span{Start: 20 * time.Second, End: 35 * time.Second})
	if servers < 2 {
		return a
	}
	return uitest.Interleave(a, uitest.Scripted(uitest.NewFake(1, true), until, source.SaveForkless, uitest.Span{Start: 50 * time.Second, End: until}))
}

// TestCancelSaveNotOnRedis: Redis (and Valkey before 8.1) has no BGSAVE
// CANCEL: x sends nothing and says so, naming the server, and no help
// offers x there; the Valkey pane beside it still offers it.
func TestCancelSaveNotOnRedis(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, uitest.Scenario(2, 28*time.Second))
	for range 2 {
		var cmd tea.Cmd
		m, cmd = press(m, "x")
		if n := run(t, cmd); n != 0 || len(log.got()) != 0 {
			t.Fatalf("x on Redis sent %v", log.got())
		}
	}
	if foot := lineWith(t, m, "cannot cancel a save"); !strings.Contains(foot, uitest.AddrA+" cannot cancel a save: BGSAVE CANCEL needs Valkey 8.1 or later (this is redis 7.0.15)") {
		t.Errorf("footer %q", foot)
	}
	offers := func(m Model) bool {
		for _, col := range append(m.keyHelp(true).Full, m.keyHelp(false).Short) {
			for _, b := range col {
				if slices.Contains(b.Keys(), "x") {
					return true
				}
			}
		}
		return false
	}
	if offers(m) {
		t.Errorf("the help offers x with Redis focused:\n%s", plainView(m))
	}
	m, _ = press(m, "tab")
	if !offers(m) {
		t.Errorf("the help does not offer x with Valkey 9.2 focused:\n%s", plainView(m))
	}
}
