package fleetview

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

// interval is the sampling interval the root model defaults to.
const interval = 200 * time.Millisecond

func TestViewAloneFleet(t *testing.T) {
	evs := uitest.FleetScenario(60 * time.Second)
	s := viewtest.Store(evs)
	f := New(uitest.FleetTopo(), roll.Config{MaxParallel: 1}, s)
	for _, ev := range evs {
		f.Observe(ev)
	}
	f.SetSize(120, 30)
	f.SyncKeys(view.Open{Fills: true, Base: true})
	c := viewtest.Context(s)
	f.Refresh(c.Styles, s, s.Now(), viewtest.History, plot.Cadence{Interval: interval, Rest: interval}, false)
	viewtest.Golden(t, f.View(c))

	// Keys through its own bindings; what is the model's, it asks for.
	f.Update(c, viewtest.Key("down"))
	if _, ask := f.Update(c, viewtest.Key("m")); ask != view.NoteMsg("1 marked: mark two and enter shows them side by side") {
		t.Errorf("m: asked %#v", ask)
	}
	took, ask := f.Update(c, viewtest.Key("enter"))
	if o, ok := ask.(OpenMsg); !took || !ok || len(o.IDs) != 1 || o.IDs[0] != f.sel {
		t.Errorf("enter: took %v, asked %#v; want the selected node %s opened", took, ask, f.sel)
	}
	f.SyncKeys(view.Open{Base: true, Covered: true})
	if took, _ := f.Update(c, viewtest.Key("enter")); took {
		t.Errorf("enter is the rows' only while they fill the body")
	}
}
