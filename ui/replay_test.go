package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// replayOf builds a 120x40 replay of the one-server scenario (a fork save
// from 20 s to 35 s, 60 s in all).
func replayOf(t *testing.T, speed float64) Replay {
	t.Helper()
	var log sendLog
	r := NewReplay(Config{Nodes: nodes(addrA), Now: fixedNow, Send: log.send}, scenario(1, 60*time.Second), speed)
	nm, _ := r.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if len(log.got()) != 0 {
		t.Fatalf("replay sent commands")
	}
	return nm.(Replay)
}

func rupdate(t *testing.T, r Replay, msg tea.Msg) (Replay, tea.Cmd) {
	t.Helper()
	nm, cmd := r.Update(msg)
	return nm.(Replay), cmd
}

// ticks delivers n playback ticks the way the program would: each tick
// message comes from the command the previous one returned.
func ticks(t *testing.T, r Replay, cmd tea.Cmd, n int) (Replay, tea.Cmd) {
	t.Helper()
	for range n {
		if cmd == nil {
			return r, nil
		}
		// tea.Tick's command sleeps for the step; build its message directly.
		r, cmd = rupdate(t, r, replayTick{gen: r.gen})
	}
	return r, cmd
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
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyLeft})
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyLeft})
	if r.pos != 20*time.Second || len(r.Reports()) != 0 {
		t.Fatalf("after seeking back: pos %v, %d reports", r.pos, len(r.Reports()))
	}
	if v := ansi.Strip(r.View()); !strings.Contains(v, "BGSAVE fork") || !strings.Contains(v, "last save none yet") {
		t.Errorf("at 20 s the save should be running, not reported:\n%s", v)
	}
	// Forward past the end stops at the end.
	for range 5 {
		r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyRight})
	}
	if r.pos != r.end || len(r.Reports()) != 1 {
		t.Fatalf("after seeking forward: pos %v of %v, %d reports", r.pos, r.end, len(r.Reports()))
	}
	// Space at the end replays from the start.
	r, cmd = rupdate(t, r, tea.KeyMsg{Type: tea.KeySpace})
	if cmd == nil || r.pos != r.start || r.paused || len(r.Reports()) != 0 {
		t.Fatalf("replay again: pos %v paused %v", r.pos, r.paused)
	}
}

func TestReplayIsReadOnlyAndPassesKeys(t *testing.T) {
	r := replayOf(t, 1)
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
