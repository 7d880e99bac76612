package replay

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
	"github.com/vkwatch/vkwatch/ui"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestReplayOfARealRecordingSeeks: a real server watched at 10 ms and
// recorded as .zst (frames of the writer's own, at least one a second) is
// replayed from the file through the streaming replay, and each seek typed
// after g shows on screen the clock of the time typed, its wall time, and
// the server's figures of the file's last sample at or before that time.
// (source/record's TestRealRecordingSeeks checks seeks of 100,000 samples
// against the file; this checks what the screen makes of them.)
func TestReplayOfARealRecordingSeeks(t *testing.T) {
	srv := servertest.StartDefault(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "real.jsonl.zst")
	node, epoch := recordRealFor(t, ctx, srv.Addr, path, 6*time.Second)

	rf, err := record.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	r := New(ui.Config{Nodes: nodes(string(node)), Interval: 10 * time.Millisecond, Now: uitest.FixedNow},
		&record.WindowSource{F: rf, Win: record.Window{From: rf.Start, To: rf.End}}, Options{Speed: 1, Epoch: epoch, ParseTime: time.ParseDuration})
	nm, _ := r.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	r, _ = settle(t, nm.(Model), nm.(Model).Init())
	r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeySpace}) // pause: only seeks move it

	for _, target := range []time.Duration{4300 * time.Millisecond, 1700 * time.Millisecond, 5100 * time.Millisecond} {
		r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g")})
		for _, c := range target.String() {
			r, _ = rupdate(t, r, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{c}})
		}
		r, _ = rpress(t, r, tea.KeyMsg{Type: tea.KeyEnter})
		want := lastSampleAt(t, path, node, target)
		if want == nil {
			t.Fatalf("the recording has no sample of %s at or before %s", node, target)
		}
		v := ansi.Strip(r.View())
		// The clock counts from the recording's first event, which comes
		// as late as the watcher's connection; the wall time from the epoch.
		clock := "replay " + fmtClock(target-rf.Start) + " / "
		wall := epoch.Add(target).Local().Format("15:04:05")
		if !regexp.MustCompile(regexp.QuoteMeta(clock) + `.*` + regexp.QuoteMeta(wall)).MatchString(v) {
			t.Errorf("g %s: the screen's clock is not %q with the wall time %s:\n%s", target, clock, wall, v)
		}
		for _, id := range []string{"used", "rss", "ping"} {
			mt := &plot.Charts[plot.Index(id)]
			text := mt.CurrentText(want)
			if !regexp.MustCompile(regexp.QuoteMeta(mt.Label) + ` +` + regexp.QuoteMeta(text) + ` `).MatchString(v) {
				t.Errorf("g %s: the pane's %s is not %q, the file's sample at %s:\n%s", target, id, text, want.Offset, v)
			}
		}
	}
}

// recordRealFor watches the server at addr at a 10 ms interval for d and
// records it to path, returning its node and the recording's epoch.
func recordRealFor(t *testing.T, ctx context.Context, addr, path string, d time.Duration) (source.NodeID, time.Time) {
	t.Helper()
	w, clock, id := watchtest.Connect(t, ctx, addr, watch.Config{Interval: 10 * time.Millisecond})
	events := watchtest.Run(t, w, 1024)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := record.Header{VKWatch: "test", Epoch: clock.Epoch(), Settings: map[string]string{"interval": "10ms"},
		Servers: []record.ServerInfo{{Node: w.Node(), Addr: w.Endpoint().String(), Identity: &id}}}
	rw, err := record.NewWriter(f, h, record.Options{Compression: record.Zstd})
	if err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case ev := <-events:
			if err := rw.Write(ev); err != nil {
				t.Fatal(err)
			}
			if ev.Offset < d {
				continue
			}
		case <-ctx.Done():
			t.Fatalf("recording: %v", ctx.Err())
		}
		break
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Node(), clock.Epoch()
}

// lastSampleAt is node's last sample at or before t in the recording at
// path, read whole from its start.
func lastSampleAt(t *testing.T, path string, node source.NodeID, at time.Duration) *source.Sample {
	t.Helper()
	rec, err := record.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var last *source.Sample
	for _, ev := range rec.Events {
		if ev.Kind == source.EventSample && ev.Node == node && ev.Offset <= at {
			last = ev.Sample
		}
	}
	return last
}
