package replay

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// nodes gives each address its own node id, as for servers that are not
// cluster nodes.
func nodes(addrs ...string) []ui.Node {
	out := make([]ui.Node, len(addrs))
	for i, a := range addrs {
		out[i] = ui.Node{ID: source.NodeID(a), Addr: a}
	}
	return out
}

// fleetNodes are the fake cluster's nodes, as the monitor lists them.
func fleetNodes() []ui.Node {
	var out []ui.Node
	for i := 1; i <= 6; i++ {
		out = append(out, ui.Node{ID: uitest.FleetID(i), Addr: uitest.FleetAddr(i)})
	}
	return out
}

// replayOf builds a 120x40 replay of the one-server scenario (a fork save
// from 20 s to 35 s, 60 s in all).
func replayOf(t *testing.T, speed float64) Model {
	t.Helper()
	var sent atomic.Int32
	send := func(source.NodeID, ...string) { sent.Add(1) }
	r := NewOfEvents(ui.Config{Nodes: nodes(uitest.AddrA), Now: uitest.FixedNow, Send: send}, uitest.Scenario(1, 60*time.Second), speed)
	nm, _ := r.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if sent.Load() != 0 {
		t.Fatalf("replay sent commands")
	}
	r, _ = settle(t, nm.(Model), r.Init())
	return r
}

func rupdate(t *testing.T, r Model, msg tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	nm, cmd := r.Update(msg)
	return nm.(Model), cmd
}

// settle runs the commands a replay returned (its reads and seeks) and
// delivers their messages, as the program would, and says whether a tick
// is scheduled; ticks themselves are delivered by ticks.
func settle(t *testing.T, r Model, cmd tea.Cmd) (Model, bool) {
	t.Helper()
	replayTicker = func(gen int) tea.Cmd { return func() tea.Msg { return replayTick{gen: gen} } }
	ticking := false
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case replayTick:
			ticking = ticking || msg.gen == r.gen
		case nil:
		default:
			var next tea.Cmd
			r, next = rupdate(t, r, msg)
			queue = append(queue, next)
		}
	}
	return r, ticking
}

// ticks delivers n playback ticks the way the program would: each tick
// message comes from the command the previous one returned. The command
// returned is non-nil while playback goes on.
func ticks(t *testing.T, r Model, cmd tea.Cmd, n int) (Model, tea.Cmd) {
	t.Helper()
	r, ticking := settle(t, r, cmd)
	for range n {
		if !ticking {
			return r, nil
		}
		var c tea.Cmd
		r, c = rupdate(t, r, replayTick{gen: r.gen})
		r, ticking = settle(t, r, c)
	}
	if !ticking {
		return r, nil
	}
	return r, r.tick()
}

// rpress types a key into a replay and lets what it starts (a seek) land.
func rpress(t *testing.T, r Model, k tea.KeyMsg) (Model, bool) {
	t.Helper()
	r, cmd := rupdate(t, r, k)
	return settle(t, r, cmd)
}

func TestReplayPlaysPausesAndSeeks(t *testing.T) {
	r := replayOf(t, 10)
	if r.Init() == nil {
		t.Fatal("replay should start ticking")
	}
	if v := ansi.Strip(r.View()); !strings.Contains(v, "replay 0:00 / 0:59") || !strings.Contains(v, "last save none yet") {
		t.Fatalf("start:\n%s", v)
	}
	// 40 ticks at x10 are 40 s of recording: past the save's end at 35 s.
	r, cmd := ticks(t, r, r.Init(), 40)
	if cmd == nil {
		t.Fatal("playback stopped before the end")
	}
	if len(r.Reports()) != 1 || !strings.Contains(ansi.Strip(r.View()), "replay 0:40 / 0:59") {
		t.Fatalf("after 40 s: %d reports\n%s", len(r.Reports()), ansi.Strip(r.View()))
	}

	// Space pauses: a tick in flight is ignored.
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeySpace})
	stale := replayTick{gen: r.gen - 1}
	r, cmd = rupdate(t, r, stale)
	if cmd != nil || r.pos != 40*time.Second || !strings.Contains(ansi.Strip(r.View()), "paused") {
		t.Fatalf("paused replay moved to %v", r.pos)
	}

	// Back 10 s twice: before the save ended, so its report is gone again.
	r, _ = rpress(t, r, tea.KeyMsg{Type: tea.KeyLeft})
	r, _ = rpress(t, r, tea.KeyMsg{Type: tea.KeyLeft})
	if r.pos != 20*time.Second || len(r.Reports()) != 0 {
		t.Fatalf("after seeking back: pos %v, %d reports", r.pos, len(r.Reports()))
	}
	if v := ansi.Strip(r.View()); !strings.Contains(v, "BGSAVE fork") || !strings.Contains(v, "last save none yet") {
		t.Errorf("at 20 s the save should be running, not reported:\n%s", v)
	}
	// Forward past the end stops at the end.
	for range 5 {
		r, _ = rpress(t, r, tea.KeyMsg{Type: tea.KeyRight})
	}
	if r.pos != r.end || len(r.Reports()) != 1 {
		t.Fatalf("after seeking forward: pos %v of %v, %d reports", r.pos, r.end, len(r.Reports()))
	}
	// Space at the end replays from the start.
	r, ticking := rpress(t, r, tea.KeyMsg{Type: tea.KeySpace})
	if !ticking || r.pos != r.start || r.paused || len(r.Reports()) != 0 {
		t.Fatalf("replay again: pos %v paused %v", r.pos, r.paused)
	}
}

func TestReplayIsReadOnlyAndPassesKeys(t *testing.T) {
	r := replayOf(t, 1)
	// The help offers no command a recording cannot take, short or full.
	help := func(r Model) string {
		v := ansi.Strip(r.View())
		return v[strings.LastIndex(v, "\n")+1:]
	}
	if h := help(r); strings.Contains(h, "bgsave") || strings.Contains(h, "bgrewriteaof") || !strings.Contains(h, "quit") {
		t.Errorf("a replay's help offers commands: %q", h)
	}
	full, _ := rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("?")})
	if v := ansi.Strip(full.View()); strings.Contains(v, "bgsave") || strings.Contains(v, "cancel save") || !strings.Contains(v, "quit") {
		t.Errorf("a replay's full help offers commands:\n%s", v)
	}
	r, cmd := rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("b")})
	if cmd != nil || !strings.Contains(ansi.Strip(r.View()), "read-only: BGSAVE not sent (a recording takes no commands)") {
		t.Errorf("b in a replay should be refused:\n%s", ansi.Strip(r.View()))
	}
	_, cmd = rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if cmd == nil {
		t.Fatal("q gave no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q should quit a replay")
	}
}

func TestReplayEndsAndStopsTicking(t *testing.T) {
	r := replayOf(t, 100)
	r, cmd := ticks(t, r, r.Init(), 1000)
	if cmd != nil || r.pos != r.end || !strings.Contains(ansi.Strip(r.View()), "end (space replays)") {
		t.Fatalf("replay did not end: pos %v, cmd %v", r.pos, cmd != nil)
	}
}

// TestReplaySpaceWhileSeeking: space pressed before a seek lands (the first
// one, while a loaded machine reads the file) pauses once it lands; it used
// to drop the seek's answer and leave the replay "seeking" for ever.
func TestReplaySpaceWhileSeeking(t *testing.T) {
	r := NewOfEvents(ui.Config{Nodes: nodes(uitest.AddrA), Now: uitest.FixedNow}, uitest.Scenario(1, 60*time.Second), 10)
	r, _ = rupdate(t, r, tea.WindowSizeMsg{Width: 120, Height: 40})
	seek := r.Init()
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeySpace})
	r, _ = settle(t, r, seek)
	v := ansi.Strip(r.View())
	if r.seeking || !r.paused || !strings.Contains(v, "paused (space plays)") {
		t.Fatalf("space during the first seek: seeking %v, paused %v\n%s", r.seeking, r.paused, v)
	}
	r, ticking := rpress(t, r, tea.KeyMsg{Type: tea.KeySpace})
	if !ticking || r.paused {
		t.Fatalf("space again does not play: ticking %v, paused %v", ticking, r.paused)
	}
}

// TestReplayCtrlCWhileTyping: ctrl+c ends a replay at once even while a
// time is being typed after g (it is not taken for part of the time).
func TestReplayCtrlCWhileTyping(t *testing.T) {
	r := New(ui.Config{Nodes: nodes(uitest.AddrA), Now: uitest.FixedNow}, MemorySource(uitest.Scenario(1, 60*time.Second)),
		Options{Speed: 1, ParseTime: time.ParseDuration})
	r, _ = rupdate(t, r, tea.WindowSizeMsg{Width: 120, Height: 40})
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g")})
	if !r.typing {
		t.Fatal("g did not start typing a time")
	}
	_, cmd := rupdate(t, r, tea.KeyMsg{Type: tea.KeyCtrlC})
	if cmd == nil {
		t.Fatal("ctrl+c while typing: no command")
	}
	if got := cmd(); got != (tea.InterruptMsg{}) {
		t.Errorf("ctrl+c while typing gives %T, want tea.InterruptMsg", got)
	}
}

func TestReportsTableInReplay(t *testing.T) {
	r := replayOf(t, 10)
	r, cmd := ticks(t, r, r.Init(), 40) // past the save's end at 35 s
	if cmd == nil || len(r.Reports()) != 1 {
		t.Fatalf("replay did not reach the report")
	}
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	if v := ansi.Strip(r.View()); !strings.Contains(v, "save reports · 1–1 of 1") || !strings.Contains(v, "replay 0:40") {
		t.Fatalf("r in a replay:\n%s", v)
	}
	// Seeking back resets the history: the table stays open, now empty.
	r, _ = rpress(t, r, tea.KeyMsg{Type: tea.KeyLeft})
	if v := ansi.Strip(r.View()); !strings.Contains(v, "save reports · none yet") {
		t.Fatalf("after seeking back:\n%s", v)
	}
	r, _ = rpress(t, r, tea.KeyMsg{Type: tea.KeyRight})
	if v := ansi.Strip(r.View()); !strings.Contains(v, "save reports · 1–1 of 1") {
		t.Fatalf("after seeking forward:\n%s", v)
	}
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyEsc})
	if v := ansi.Strip(r.View()); strings.Contains(v, "save reports") {
		t.Fatalf("esc in a replay:\n%s", v)
	}
}

func TestFleetReplayShowsTheFleetView(t *testing.T) {
	evs := uitest.FleetScenario(30 * time.Second)
	top := *evs[0].Topology
	r := NewOfEvents(ui.Config{Nodes: fleetNodes(), Topology: &top, Now: uitest.FixedNow}, evs, 100)
	nr, _ := r.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	r = nr.(Model)
	r, _ = ticks(t, r, r.Init(), 40)
	v := ansi.Strip(r.View())
	if !strings.Contains(v, "  # node ") || !strings.Contains(v, "cluster: 6 nodes in 3 shards") || !strings.Contains(v, "fork 15.0s pause") {
		t.Fatalf("replay:\n%s", v)
	}
	// m marks in a replay (space plays and pauses there).
	nr, _ = r.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("m")})
	if !strings.Contains(ansi.Strip(nr.(Model).View()), "▸*") {
		t.Fatalf("m did not mark in a replay")
	}
}
