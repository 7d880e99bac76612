package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// riskyScenario is the two-server scenario to 40 s (server A's fork save,
// 20-35 s, peaked at 18 MiB of live COW) followed by one sample of A with
// maxmemory set just under used_memory + 18 MiB, and of B (forkless) with
// the same.
func riskyScenario() []source.Event {
	evs := uitest.Scenario(2, 40*time.Second)
	for i, f := range []*uitest.Fake{uitest.NewFake(0, false), uitest.NewFake(1, true)} {
		f.Seq = 10000
		ev := f.SampleEvent(40*time.Second + time.Duration(i)*time.Millisecond)
		ev.Sample.Info.MaxMemory = source.Some(ev.Sample.Info.UsedMemory.V + 17*uitest.MiB)
		evs = append(evs, ev)
	}
	return evs
}

// warnText is what the footer says about server A in riskyScenario.
func warnText(t *testing.T, m Model) string {
	t.Helper()
	s := m.store.Live(uitest.NodeOf(0)).Latest
	used, maxmem := s.Info.UsedMemory.V, s.Info.MaxMemory.V
	return uitest.AddrA + ": a fork save may need " + text.Bytes(used+18*uitest.MiB) + " (used " + text.Bytes(used) +
		" + last COW 18.0 MiB) but maxmemory is " + text.Bytes(maxmem)
}

func TestForkWarningThenConfirm(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, riskyScenario())
	m, cmd := press(m, "b")
	if cmd != nil {
		run(t, cmd)
		t.Fatalf("b sent despite the warning: %v", log.got())
	}
	want := footAt + warnText(t, m) + "; press b again to save anyway"
	if l := lineWith(t, m, "a fork save may need"); strings.TrimSpace(l) != want {
		t.Fatalf("footer\n got %q\nwant %q", l, want)
	}
	if !strings.Contains(plainView(m), "b again: save anyway • any other key: cancel") {
		t.Errorf("help line should say how to confirm:\n%s", plainView(m))
	}
	// Events in between are not keys: the confirmation still holds.
	a := uitest.NewFake(0, false)
	a.Seq = 20000
	m = feed(t, m, []source.Event{a.SampleEvent(41 * time.Second)})
	m, cmd = press(m, "b")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGSAVE"}) {
		t.Fatalf("confirmed b: ran %d, sent %v", n, log.got())
	}
	if v := plainView(m); strings.Contains(v, "a fork save may need") || !strings.Contains(v, "sending BGSAVE to "+uitest.AddrA) ||
		strings.Contains(v, "save anyway") {
		t.Errorf("after confirming:\n%s", v)
	}
}

func TestForkWarningThenOtherKeyCancels(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, riskyScenario())
	m, _ = press(m, "b")
	if !key.Matches(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b")}, m.confirm.key) {
		t.Fatal("no warning")
	}
	// Another key cancels and does its own job: tab moves the focus.
	m, cmd := press(m, "tab")
	run(t, cmd)
	if v := plainView(m); strings.Contains(v, "a fork save may need") || strings.Contains(v, "save anyway") || m.panes.Focus() != 1 {
		t.Fatalf("tab should cancel the pending save and move focus:\n%s", v)
	}
	m, _ = press(m, "shift+tab")
	// b now is a new first press: it warns again, it does not send.
	m, cmd = press(m, "b")
	run(t, cmd)
	if len(log.got()) != 0 || !strings.Contains(plainView(m), "press b again") {
		t.Fatalf("b after a cancel should warn again, sent %v:\n%s", log.got(), plainView(m))
	}
	// An unbound key cancels too.
	m, _ = press(m, "z")
	m, cmd = pressKey(m, tea.KeyEsc)
	run(t, cmd)
	if len(log.got()) != 0 || m.confirm.key.Enabled() || strings.Contains(plainView(m), "save anyway") {
		t.Fatalf("z should cancel, sent %v", log.got())
	}
}

func TestForkWarningForBoth(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, riskyScenario())
	// Server B saves forkless: only A warns, and B gets nothing either.
	m, cmd := press(m, "B")
	run(t, cmd)
	if len(log.got()) != 0 {
		t.Fatalf("B sent despite a warning: %v", log.got())
	}
	foot := lineWith(t, m, "a fork save may need")
	if !strings.Contains(foot, warnText(t, m)+"; press B again to save anyway") || strings.Contains(foot, uitest.AddrB) {
		t.Fatalf("footer %q", foot)
	}
	// b is not B: it cancels B and is checked on its own (A is focused).
	m, cmd = press(m, "b")
	run(t, cmd)
	if len(log.got()) != 0 || !strings.Contains(plainView(m), "press b again") {
		t.Fatalf("b after B: sent %v:\n%s", log.got(), plainView(m))
	}
	m, _ = press(m, "B")
	m, cmd = press(m, "B")
	if n := run(t, cmd); n != 2 || !slices.Equal(log.got(), []string{"0 BGSAVE", "1 BGSAVE"}) {
		t.Fatalf("confirmed B: ran %d, sent %v", n, log.got())
	}
}

func TestForkWarningBothServers(t *testing.T) {
	// Both servers fork and both are short of memory: one warning each,
	// then one note on how to confirm.
	evs := riskyScenario()
	b := uitest.NewFake(1, false)
	b.Seq = 30000
	ev := b.SampleEvent(40*time.Second + 5*time.Millisecond)
	ev.Sample.Info.RDBLastCOW = source.Some[int64](50 * uitest.MiB)
	ev.Sample.Proc.HostMemAvailable = source.Some[int64](20 * uitest.MiB)
	evs = append(evs, ev)
	var log sendLog
	// Wide enough for both warnings; narrower, the footer is cut and the
	// help line still says how to confirm.
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 300, 50, evs)
	m, cmd := press(m, "B")
	run(t, cmd)
	foot := lineWith(t, m, "a fork save may need")
	// B writes and has no save of its own to calibrate on: its forecast
	// is the uniform bound, larger than the last COW, and says so.
	wantB := uitest.AddrB + ": a fork save may need 95.7 MiB more (its forecast COW (uniform bound)) but only 20.0 MiB is available (MemAvailable)"
	if len(log.got()) != 0 || !strings.Contains(foot, warnText(t, m)+"  │  ") ||
		!strings.Contains(foot, wantB+"  │  press B again to save anyway") {
		t.Fatalf("sent %v, footer %q", log.got(), foot)
	}
	// b with B's pane focused warns about B alone.
	m, _ = press(m, "tab")
	m, _ = press(m, "b")
	if foot := lineWith(t, m, "a fork save may need"); strings.Contains(foot, uitest.AddrA) || !strings.Contains(foot, wantB) {
		t.Errorf("b on server B: footer %q", foot)
	}
}

func TestNoForkWarningWithoutRisk(t *testing.T) {
	// The plain scenario: no maxmemory, no MemAvailable. b sends at once.
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, uitest.Scenario(2, 40*time.Second))
	_, cmd := press(m, "b")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGSAVE"}) {
		t.Fatalf("ran %d, sent %v", n, log.got())
	}
}

// TestAOFRewriteWarning: BGREWRITEAOF forks too (even where saves are
// forkless), so a warns where b would, and a again sends it.
func TestAOFRewriteWarning(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send}, 200, 50, riskyScenario())
	m, cmd := press(m, "a")
	if n := run(t, cmd); n != 0 || len(log.got()) != 0 {
		t.Fatalf("a with a memory risk: ran %d, sent %v", n, log.got())
	}
	foot := strings.TrimSpace(lineWith(t, m, "may need"))
	if !strings.HasPrefix(foot, footAt+uitest.AddrA+": an AOF rewrite (a fork) may need ") || !strings.HasSuffix(foot, "; press a again to rewrite anyway") {
		t.Fatalf("footer %q", foot)
	}
	_, cmd = press(m, "a")
	if n := run(t, cmd); n != 1 || !slices.Equal(log.got(), []string{"0 BGREWRITEAOF"}) {
		t.Fatalf("a confirmed: ran %d, sent %v", n, log.got())
	}
}

func TestReadOnlyBeforeForkWarning(t *testing.T) {
	var log sendLog
	m := setup(t, Config{Nodes: nodes(uitest.AddrA, uitest.AddrB), Send: log.send, ReadOnly: true}, 200, 50, riskyScenario())
	for range 2 {
		var cmd tea.Cmd
		m, cmd = press(m, "b")
		run(t, cmd)
		if l := strings.TrimSpace(lineWith(t, m, "read-only")); l != footAt+"read-only: BGSAVE not sent (--read-only)" || m.confirm.key.Enabled() {
			t.Fatalf("footer %q", l)
		}
	}
	if len(log.got()) != 0 {
		t.Errorf("read-only model sent %v", log.got())
	}
}
