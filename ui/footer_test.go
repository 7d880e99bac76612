package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// eventsBetween are the events of evs from from (inclusive) to to
// (exclusive).
func eventsBetween(evs []source.Event, from, to time.Duration) []source.Event {
	var out []source.Event
	for _, ev := range evs {
		if ev.Offset >= from && ev.Offset < to {
			out = append(out, ev)
		}
	}
	return out
}

// TestFooterSaysWhenAndAges: a footer entry says when it happened; a
// save's start stays while the save runs, however long, and goes when
// it ends; any other entry goes after 10 s by the events' clock.
func TestFooterSaysWhenAndAges(t *testing.T) {
	sec := time.Second
	evs := uitest.Scenario(1, 60*sec) // one fork save, 20 s to 35 s
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, eventsBetween(evs, 0, 20*sec))
	m = feed(t, m, []source.Event{commandEvent(0, 20*sec, "BGSAVE", "Background saving started", "")})
	start := "15:04:25 BGSAVE on " + uitest.AddrA + ": Background saving started" // the answer's own time
	if l := strings.TrimSpace(lineWith(t, m, "Background saving started")); l != start {
		t.Fatalf("footer %q, want %q", l, start)
	}
	m = feed(t, m, eventsBetween(evs, 20*sec, 35*sec))
	if !strings.Contains(plainView(m), start) {
		t.Fatalf("the save's start gone 15 s into the save, while it runs:\n%s", plainView(m))
	}
	m = feed(t, m, eventsBetween(evs, 35*sec, 37*sec))
	if strings.Contains(plainView(m), "Background saving started") {
		t.Fatalf("the save's start still in the footer after the save ended:\n%s", plainView(m))
	}

	m = feed(t, m, []source.Event{commandEvent(0, 40*sec, "BGSAVE", "", "ERR something")})
	m = feed(t, m, eventsBetween(evs, 37*sec, 50*sec))
	if !strings.Contains(plainView(m), "15:04:45 ✗ BGSAVE on "+uitest.AddrA+": ERR something") {
		t.Fatalf("an error answer gone before 10 s:\n%s", plainView(m))
	}
	m = feed(t, m, eventsBetween(evs, 50*sec, 51*sec))
	if strings.Contains(plainView(m), "ERR something") {
		t.Fatalf("an error answer still in the footer 10 s on:\n%s", plainView(m))
	}
}

// TestFooterKeepsAPendingQuestion: while a key waits to be pressed again
// (a memory warning), its footer stays however long: it is the question
// the screen asks.
func TestFooterKeepsAPendingQuestion(t *testing.T) {
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: func(source.NodeID, ...string) {}}, 200, 50, riskyScenario())
	m, _ = press(m, "b")
	if !strings.Contains(plainView(m), "press b again to save anyway") {
		t.Fatalf("no warning:\n%s", plainView(m))
	}
	a := uitest.NewFake(0, false)
	a.Seq = 20000
	var later []source.Event
	for off := 41 * time.Second; off < 70*time.Second; off += uitest.Tick {
		later = append(later, a.SampleEvent(off))
	}
	m = feed(t, m, later)
	if !strings.Contains(plainView(m), "press b again to save anyway") {
		t.Errorf("the warning of a pending b went after 30 s:\n%s", plainView(m))
	}
}

// TestStuckFooterGoesWithTheSave: a save that looked stuck ends; a
// sample of it folded late (older than the one that saw it end) does not
// bring its "stuck?" back: that is about a save no longer running.
func TestStuckFooterGoesWithTheSave(t *testing.T) {
	evs := stuckEvents(false, 0, 40*time.Second, 16*time.Second) // running far past its forecast
	m := setup(t, Config{Nodes: nodes(uitest.AddrA)}, 120, 40, evs)
	if !strings.Contains(plainView(m), "⚠ stuck? the save on "+uitest.AddrA) {
		t.Fatalf("not stuck:\n%s", plainView(m))
	}
	f := uitest.NewFake(0, false)
	f.Seq = 50000
	after := f.SampleEvent(40 * time.Second)
	after.Sample.Save = nil
	last := evs[len(evs)-1]
	late := *last.Sample
	late.Seq = 40000
	m = feed(t, m, []source.Event{after, {Node: last.Node, Kind: source.EventSample, Offset: last.Offset, Sample: &late}})
	if strings.Contains(plainView(m), "stuck?") {
		t.Errorf("stuck? shown after the save ended:\n%s", plainView(m))
	}
}
