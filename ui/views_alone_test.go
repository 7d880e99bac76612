package ui

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

// Each view made and drawn alone, without a Model: a store fed with a
// scenario's events and a view.Context of it are all a view is given.
// Regenerate with go test ./ui -run TestViewAlone -update.

// alonePanes makes, sizes and draws the panes of ids as the model's
// refresh does, side by side in w x h.
func alonePanes(c *view.Context, w, h int, ids ...source.NodeID) []*pane {
	var panes []*pane
	now := c.Store.Now()
	cols := make([]*plot.Columns, len(ids))
	for i, id := range ids {
		p := newPane(i, id, string(id))
		p.SetSize(w/len(ids), h)
		p.sync(c.Store.View(id), now, defaultHistory, plot.Cadence{Interval: defaultInterval, Rest: defaultInterval})
		panes, cols[i] = append(panes, p), &p.Columns
	}
	tops := plot.ScaleTops(cols, nil, false, plot.Holds{}, now)
	for i, p := range panes {
		p.drawCharts(c.Styles, c.Store.View(p.id), now, tops[i])
	}
	return panes
}

func TestViewAlonePanes(t *testing.T) {
	s := viewtest.Store(uitest.Scenario(2, 60*time.Second))
	c := viewtest.Context(s, uitest.NodeOf(0), uitest.NodeOf(1))
	panes := alonePanes(c, 160, 30, uitest.NodeOf(0), uitest.NodeOf(1))
	v := newPanesView(viewOpts{servers: 2}).(*panesView)
	v.show(panes, layoutSide, 1)
	v.SyncKeys(view.Open{Fills: true, Base: true, Shown: 2})
	viewtest.Golden(t, v.View(c))

	// tab asks the model for the next pane; the view keeps no focus.
	if took, ask := v.Update(c, viewtest.Key("tab")); !took || ask != view.FocusMsg(0) {
		t.Errorf("tab from pane 2 of 2: took %v, asked %#v; want view.FocusMsg(0)", took, ask)
	}
	if took, ask := v.Update(c, viewtest.Key("b")); took || ask != nil {
		t.Errorf("b is not the panes view's: took %v, asked %#v", took, ask)
	}
}
