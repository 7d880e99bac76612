package fleetview

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
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

// The fleet's line says what its intervals keep within, its share of a
// split fleet, the nodes watched less often for their cost and why a nodes
// file did not read; the summary, the most watching cost a node.
func TestViewFleetBudgetAndCost(t *testing.T) {
	evs := uitest.FleetScenario(60 * time.Second)
	for _, ev := range evs {
		if ev.Sample != nil {
			ev.Sample.Observer.Share = source.Some(0.0004)
		}
	}
	s := viewtest.Store(evs)
	top := uitest.FleetTopo()
	top.PingBudget, top.SampleBudget, top.Share = 1000, 200, "1/4"
	top.Via, top.From, top.Err = "nodes file", "/etc/vkwatch/nodes.txt", "/etc/vkwatch/nodes.txt:3: bad port"
	top.Throttled = []source.Attended{{Node: top.Nodes()[0].ID, Reason: "1.3% of a core", Interval: 2 * time.Second}}
	f := New(top, roll.Config{MaxParallel: 1}, s)
	for _, ev := range evs {
		f.Observe(ev)
	}
	f.Observe(source.Event{Kind: source.EventTopology, Topology: &top}) // the scenario's own came before
	f.SetSize(240, 30)
	c := viewtest.Context(s)
	f.Refresh(c.Styles, s, s.Now(), viewtest.History, plot.Cadence{Interval: interval, Rest: interval}, false)
	got := strings.Join(f.View(c)[:2], "\n")
	for _, want := range []string{"budget 1000 PINGs/s, 200 INFO/s at rest", "shard 1/4", "1 over --max-observer-cost: watched less often",
		"✗ nodes file: /etc/vkwatch/nodes.txt:3: bad port", "vkwatch's cost ≤ 0.04% of a node"} {
		if !strings.Contains(got, want) {
			t.Errorf("the fleet's lines lack %q:\n%s", want, got)
		}
	}
}
