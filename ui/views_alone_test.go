package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// Each view made and drawn alone, without a Model: a store fed with a
// scenario's events and a viewCtx of it are all a view is given.
// Regenerate with go test ./ui -run TestViewAlone -update.

// aloneStore is a store fed with evs, as the model folds them (commands'
// answers go to the footer, not the store).
func aloneStore(evs []source.Event) *store.Store {
	s := store.New(store.Config{Keep: defaultHistory, Columns: plot.StoreColumns()})
	for _, ev := range evs {
		if ev.Kind != source.EventCommand && ev.Kind != source.EventTopology {
			s.Add(ev.Inert())
		}
	}
	return s
}

// aloneCtx is a context over s for the given nodes.
func aloneCtx(s *store.Store, ids ...source.NodeID) *viewCtx {
	st := plot.Styles(false)
	return &viewCtx{st: &st, prog: progress.New(progress.WithDefaultGradient(), progress.WithoutPercentage()),
		store: s, nodes: ids}
}

// alonePanes makes, sizes and draws the panes of ids as the model's
// refresh does, side by side in w x h.
func alonePanes(c *viewCtx, w, h int, ids ...source.NodeID) {
	now := c.store.Now()
	cols := make([]*plot.Columns, len(ids))
	for i, id := range ids {
		p := newPane(i, id, string(id))
		p.SetSize(w/len(ids), h)
		p.sync(c.store.View(id), now, defaultHistory, plot.Cadence{Interval: defaultInterval, Rest: defaultInterval})
		c.panes, cols[i] = append(c.panes, p), &p.Columns
	}
	tops := plot.ScaleTops(cols, nil, false, plot.Holds{}, now)
	for i, p := range c.panes {
		p.drawCharts(c.st, c.store.View(p.id), now, tops[i])
	}
}

func goldenLines(t *testing.T, lines []string) {
	t.Helper()
	golden.RequireEqual(t, strings.Join(lines, "\n"))
}

// runes is a key press by name, as press sends it.
func runes(k string) tea.KeyMsg {
	if kt, ok := keyTypes[k]; ok {
		return tea.KeyMsg{Type: kt}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func TestViewAlonePanes(t *testing.T) {
	s := aloneStore(uitest.Scenario(2, 60*time.Second))
	c := aloneCtx(s, uitest.NodeOf(0), uitest.NodeOf(1))
	alonePanes(c, 160, 30, uitest.NodeOf(0), uitest.NodeOf(1))
	c.mode, c.focus = layoutSide, 1
	v := newPanesView(viewOpts{servers: 2})
	v.SyncKeys(openState{fills: true, base: true, shown: 2})
	goldenLines(t, v.View(c))

	// tab asks the model for the next pane; the view keeps no focus.
	if took, req := v.Update(c, runes("tab")); !took || req != focusTo(0) {
		t.Errorf("tab from pane 2 of 2: took %v, asked %#v; want focusTo(0)", took, req)
	}
	if took, req := v.Update(c, runes("b")); took || req != nil {
		t.Errorf("b is not the panes view's: took %v, asked %#v", took, req)
	}
}

func TestViewAloneCost(t *testing.T) {
	s := aloneStore(uitest.TwoSaves())
	c := aloneCtx(s, uitest.NodeOf(0), uitest.NodeOf(1))
	v := newCostView(viewOpts{})
	v.SetSize(120, 24)
	v.SyncKeys(openState{fills: true})
	goldenLines(t, v.View(c))
	// y plots the footprint, through the view's own key.
	if took, _ := v.Update(c, runes("y")); !took || !strings.Contains(strings.Join(v.View(c), "\n"), "Y: footprint") {
		t.Errorf("y should switch the view to the footprint")
	}
	v.SyncKeys(openState{})
	if took, _ := v.Update(c, runes("y")); took {
		t.Errorf("y works only while the view is open")
	}
}

func TestViewAloneTable(t *testing.T) {
	s := aloneStore(uitest.ReportsScenario(12))
	c := aloneCtx(s)
	v := newReportTable(viewOpts{})
	v.SetSize(120, 14)
	v.SyncKeys(openState{fills: true})
	v.(*reportTable).opened()
	before := strings.Join(v.View(c), "\n")
	if took, _ := v.Update(c, runes("up")); !took {
		t.Fatal("up should scroll the table")
	}
	after := v.View(c)
	if strings.Join(after, "\n") == before {
		t.Errorf("up did not scroll:\n%s", before)
	}
	goldenLines(t, after)
}

func TestViewAloneHelp(t *testing.T) {
	g := newKeyMap(2, false)
	v := newHelpView(viewOpts{})
	v.SetSize(80, 0)
	v.SyncKeys(openState{})
	c := aloneCtx(nil)
	c.help = keyHelp{short: []key.Binding{g.Save, g.Both, g.Pause, *v.Toggle(), g.Quit, g.Rewrite, g.Cancel}}
	short := v.View(c)
	// A key waiting to be pressed again takes the line, whatever the keys.
	c.prompt = prompt{key: "x", what: "send BGSAVE CANCEL", other: "keep it"}
	asked := v.View(c)
	// The full help: its columns, and ? says it closes it.
	v.SyncKeys(openState{help: true})
	c.prompt, c.full = prompt{}, true
	c.help.full = [][]key.Binding{g.commands(), {g.Scale, g.Close, g.Pause, g.Shot, *v.Toggle(), g.Quit}}
	full := v.View(c)
	goldenLines(t, append(append(short, asked...), full...))
	// The cache follows what is drawn: a label that changes redraws.
	g.Pause.SetHelp("p", "resume")
	c.help.full[1][2] = g.Pause
	if again := v.View(c); !strings.Contains(strings.Join(again, "\n"), "resume") {
		t.Errorf("the help kept a stale label:\n%s", strings.Join(again, "\n"))
	}
}

func TestViewAloneFleet(t *testing.T) {
	evs := uitest.FleetScenario(60 * time.Second)
	s := aloneStore(evs)
	f := newFleetView(uitest.FleetTopo(), roll.Config{MaxParallel: 1}, s)
	for _, ev := range evs {
		f.observe(ev)
	}
	f.SetSize(120, 30)
	f.SyncKeys(openState{fills: true, base: true})
	st := plot.Styles(false)
	f.refresh(&st, s, s.Now(), defaultHistory, plot.Cadence{Interval: defaultInterval, Rest: defaultInterval}, false)
	c := aloneCtx(s)
	c.st = &st
	goldenLines(t, f.View(c))

	// Keys through its own bindings; what is the model's, it asks for.
	f.Update(c, runes("down"))
	if _, req := f.Update(c, runes("m")); req != noteFor("1 marked: mark two and enter shows them side by side") {
		t.Errorf("m: asked %#v", req)
	}
	took, req := f.Update(c, runes("enter"))
	if o, ok := req.(openNodes); !took || !ok || len(o.ids) != 1 || o.ids[0] != f.sel {
		t.Errorf("enter: took %v, asked %#v; want the selected node %s opened", took, req, f.sel)
	}
	f.SyncKeys(openState{base: true, covered: true})
	if took, _ := f.Update(c, runes("enter")); took {
		t.Errorf("enter is the rows' only while they fill the body")
	}
}
