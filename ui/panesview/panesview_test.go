package panesview

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

// The panes view made and drawn alone, without the root model: a store fed
// with a scenario's events and a view.Context of it are all it is given.
// Regenerate with go test ./ui/panesview -run TestViewAlonePanes -update.

func TestViewAlonePanes(t *testing.T) {
	s := viewtest.Store(uitest.Scenario(2, 60*time.Second))
	c := viewtest.Context(s, uitest.NodeOf(0), uitest.NodeOf(1))
	v := New(2, false)
	for _, id := range c.Nodes {
		v.Add(id, string(id))
	}
	v.ShowAll()
	v.SetSize(160, 30)
	every := 200 * time.Millisecond // the root's default interval
	v.Refresh(c.Styles, s, s.Now(), viewtest.History, plot.Cadence{Interval: every, Rest: every}, false, false)
	v.SyncKeys(view.Open{Fills: true, Base: true, Shown: 2})
	if v.Mode() != Side {
		t.Fatalf("two panes in 160x30: mode %d, want side by side", v.Mode())
	}
	// tab moves the focus to the second pane, which the golden draws
	// focused; the view keeps the focus and asks the root nothing.
	if took, ask := v.Update(c, viewtest.Key("tab")); !took || ask != nil || v.Focus() != 1 {
		t.Errorf("tab from pane 1 of 2: took %v, asked %#v, focus %d; want pane 2", took, ask, v.Focus())
	}
	viewtest.Golden(t, v.View(c))
	if took, _ := v.Update(c, viewtest.Key("tab")); !took || v.Focus() != 0 {
		t.Errorf("tab from pane 2 of 2: focus %d, want the first", v.Focus())
	}
	if id, _, _ := v.Focused(); id != uitest.NodeOf(0) {
		t.Errorf("focused %s, want %s", id, uitest.NodeOf(0))
	}
	if took, ask := v.Update(c, viewtest.Key("b")); took || ask != nil {
		t.Errorf("b is not the panes view's: took %v, asked %#v", took, ask)
	}
}

// TestFit: two panes go side by side where each is 80 wide, stacked where
// narrower and tall enough, side by side however narrow, else one.
func TestFit(t *testing.T) {
	for _, c := range []struct {
		w, h int
		want Mode
	}{
		{200, 50, Side}, {80, 24, Stacked}, {120, 17, Side}, {100, 17, Single}, {40, 10, TooSmall},
	} {
		if got := Fit(2, c.w, c.h).Mode; got != c.want {
			t.Errorf("two panes in %dx%d: mode %d, want %d", c.w, c.h, got, c.want)
		}
	}
}

// TestSpikeMarks: a pane marks each PING spike on the ping chart's top
// row with its main cause's letter, in the column its PING was sent, and
// names the letters beside the chart; a column with two spikes shows the
// larger's.
func TestSpikeMarks(t *testing.T) {
	spike := func(sent, ping time.Duration, k source.CauseKind) source.Event {
		return source.Event{Node: uitest.NodeOf(0), Kind: source.EventSpike, Offset: sent + 400*time.Millisecond,
			Spike: &source.Spike{Ping: ping, Sent: sent, Causes: []source.SpikeCause{{Kind: k, Covers: source.Some(ping)}}}}
	}
	evs := append(uitest.Scenario(1, 60*time.Second),
		spike(21*time.Second, 40*time.Millisecond, source.CauseFork),
		spike(40*time.Second, 9*time.Millisecond, source.CauseNotSeen),
		spike(40*time.Second+10*time.Millisecond, 30*time.Millisecond, source.CauseCommand))
	s := viewtest.Store(evs)
	c := viewtest.Context(s, uitest.NodeOf(0))
	v := New(1, false)
	v.Add(c.Nodes[0], string(c.Nodes[0]))
	v.ShowAll()
	v.SetSize(120, 40)
	every := 200 * time.Millisecond
	v.Refresh(c.Styles, s, s.Now(), viewtest.History, plot.Cadence{Interval: every, Rest: every}, false, false)
	lines := v.View(c)
	var ping []string
	for i, l := range lines {
		if strings.Contains(l, "│ ping ") {
			ping = lines[i:]
			break
		}
	}
	if len(ping) < 2 {
		t.Fatalf("no ping chart:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(ping[1], "spikes f fork c command") {
		t.Errorf("the legend: %q", ping[1])
	}
	// The top row holds the two letters, in order.
	plotted := ping[0][strings.Index(ping[0], "µs")+len("µs") : strings.Index(ping[0], "┤")]
	var got []rune
	for _, r := range plotted {
		if r >= 'a' && r <= 'z' {
			got = append(got, r)
		}
	}
	if string(got) != "fc" {
		t.Errorf("letters %q on the ping chart's top row, want fc: %q", string(got), ping[0])
	}
}

func TestSpikeLetters(t *testing.T) {
	sp := func(sent, ping time.Duration, k source.CauseKind) source.Spike {
		return source.Spike{Ping: ping, Sent: sent, Causes: []source.SpikeCause{{Kind: k}}}
	}
	now, dt := 10*time.Second, time.Second
	letters, marked := spikeLetters(now, dt, 5, []source.Spike{
		sp(2*time.Second, time.Second, source.CauseFork),                 // before the window
		sp(7*time.Second, 5*time.Millisecond, source.CauseNotSeen),       // column 1, smaller
		sp(7*time.Second+time.Millisecond, time.Second, source.CauseAOF), // column 1, larger
		sp(10*time.Second, time.Second, source.CauseStopped),             // column 4
	}, nil)
	if string(letters[1]) != "a" || string(letters[4]) != "s" || letters[0] != 0 || len(letters) != 5 {
		t.Errorf("letters %q", letters)
	}
	if len(marked) != 2 {
		t.Errorf("marked %v", marked)
	}
}
