package panesview

import (
	"testing"
	"time"

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
