package page

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/vkwatch/vkwatch/source"
	src "github.com/vkwatch/vkwatch/source/report"
)

// syntheticInput is a recording of one server sampled every 200 ms for a
// minute, with the given saves.
func syntheticInput(saves ...src.Save) src.Input {
	s := &src.Server{Node: "127.0.0.1:7001", Addr: "127.0.0.1:7001", FootprintFrom: source.FromProc,
		Identity: &source.Identity{ServerName: "valkey", Version: "9.0.0", Role: "master"}}
	for i := range 300 {
		s.T = append(s.T, float64(i)*0.2)
		s.Used = append(s.Used, 100<<20)
		s.RSS = append(s.RSS, 120<<20)
		s.Footprint = append(s.Footprint, float64(120<<20+i<<16))
		s.Ops = append(s.Ops, 20000+float64(i%7)*100)
		s.PingP99 = append(s.PingP99, 0.3)
		s.PingMax = append(s.PingMax, 0.5+float64(i%11))
	}
	s.Saves = saves
	rec := &src.Recording{Epoch: time.Date(2026, 12, 4, 17, 20, 52, 0, time.UTC), VKWatch: "test", Servers: []*src.Server{s}}
	return src.Input{Path: "synthetic.jsonl", Recording: rec}
}

// forkSave is a BGSAVE fork from second from to second to, its curve one
// point per progress value given.
func forkSave(from, to float64, progress ...float64) src.Save {
	sv := src.Save{SaveReport: source.SaveReport{Kind: source.SaveFork, Status: source.StatusOK,
		Started: seconds(from), Ended: seconds(to), Observed: seconds(to - from),
		COW: source.Some[int64](30 << 20), PeakCOW: source.Some[int64](30 << 20)}}
	for i, p := range progress {
		sv.Curve = append(sv.Curve, source.CurvePoint{Progress: p, COW: source.Some(int64(i+1) << 20), Footprint: source.Some(int64(120<<20 + i<<20))})
	}
	if len(progress) > 0 {
		sv.PeakAtProgress = source.Some(progress[len(progress)-1])
	}
	return sv
}

// text is a string a figure wrote, where, and how wide.
type text struct {
	s    string
	x, y float64
	w    float64
}

// drawnTexts draws f on a recorder and returns every text it wrote and
// the data area.
func drawnTexts(f *Figure) ([]text, draw.Canvas) {
	rc := &recorder.Canvas{}
	c := draw.NewCanvas(rc, f.w, f.h)
	f.draw(c)
	_, pc := f.layout(c)
	dc := f.plot.DataCanvas(pc)
	sty := textStyle(inkText)
	var out []text
	for _, a := range rc.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			out = append(out, text{fs.String, float64(fs.Point.X), float64(fs.Point.Y), float64(sty.Width(fs.String))})
		}
	}
	return out, dc
}

// TestSaveLabelsAboveTheData: in every time figure, the saves' labels and
// the keys are written above the data area, never over a line; labels do
// not run into each other, and a crowd of saves is shortened to numbers
// rather than written over itself.
func TestSaveLabelsAboveTheData(t *testing.T) {
	in := syntheticInput(forkSave(5, 15), forkSave(20, 21), forkSave(21.5, 22), forkSave(22.5, 23), forkSave(40, 59.8))
	r, err := Build([]src.Input{in})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, k := range timeKinds {
		for _, s := range k.series {
			keys[s.name] = true
		}
	}
	for _, f := range r.Files[0].Rows {
		fig := f.Figures[0]
		texts, dc := drawnTexts(fig)
		var labels []text
		for _, tx := range texts {
			isKey := keys[tx.s] || strings.HasPrefix(tx.s, "footprint")
			if strings.HasPrefix(tx.s, "#") {
				labels = append(labels, tx)
			}
			if (isKey || strings.HasPrefix(tx.s, "#")) && tx.y < float64(dc.Max.Y) {
				t.Errorf("%s: %q written at y %.1f, inside the data area (top %.1f)", fig.Name, tx.s, tx.y, dc.Max.Y)
			}
		}
		sort.Slice(labels, func(i, j int) bool { return labels[i].x < labels[j].x })
		var got []string
		for i, l := range labels {
			got = append(got, l.s)
			if l.x+l.w > float64(dc.Max.X)+0.01 {
				t.Errorf("%s: %q runs past the data area's right edge", fig.Name, l.s)
			}
			if i > 0 && labels[i-1].x+labels[i-1].w > l.x {
				t.Errorf("%s: %q runs into %q", fig.Name, labels[i-1].s, l.s)
			}
		}
		if len(got) < 3 || got[0] != "#1 BGSAVE fork" || got[len(got)-1] != "#5 BGSAVE fork" {
			t.Errorf("%s: labels %q; want the lone saves in full, the crowd shortened", fig.Name, got)
		}
	}
}

// TestCostCurvesNeedPoints: a save with one or two progress reports gets
// no cost curve (a dot that "peaked at 0 %"), and the page names it
// beside the figures. Its "peak at" is the progress the sample that saw
// the peak saw, as the pane says it: n/a for a peak seen before any key
// was reported (#1), 50 % where it was seen at 50 % (#2).
func TestCostCurvesNeedPoints(t *testing.T) {
	in := syntheticInput(forkSave(5, 6, 0), forkSave(10, 11, 0, 0, 0.5), forkSave(20, 50, 0, 0.2, 0.4, 0.6, 1))
	r, err := Build([]src.Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Costs) != 2 {
		t.Fatalf("%d cost figures, want 2", len(r.Costs))
	}
	if want := "Saves #1 and #2 have fewer than 3 progress reports"; !strings.HasPrefix(r.CostNote, want) {
		t.Errorf("cost note %q, want it to start %q", r.CostNote, want)
	}
	page := string(render(t, []src.Input{in}))
	for num, want := range map[int]string{1: `data-v="">n/a`, 2: `data-v="0.5">50 %`, 3: `data-v="1">100 %`} {
		row := page[strings.Index(page, fmt.Sprintf(`<tr data-save="%d">`, num)):]
		row = row[strings.Index(row, `data-col="peak-at"`):]
		if !strings.HasPrefix(row, `data-col="peak-at" `+want) {
			t.Errorf("save #%d: peaked at %q, want %q", num, row[:60], want)
		}
	}
	if !strings.Contains(page, `id="cost-note"`) {
		t.Error("the page does not say which saves have no curve")
	}
}

// TestCostKeysGrowTheFigure: a key per server in the cost figures; many
// servers take rows of keys, and the curves keep their room.
func TestCostKeysGrowTheFigure(t *testing.T) {
	height := func(servers int) (float64, int) {
		in := syntheticInput(forkSave(20, 50, 0, 0.2, 0.4, 0.6, 1))
		rec := in.Recording
		for i := 1; i < servers; i++ {
			s := *rec.Servers[0]
			s.Node = source.NodeID(fmt.Sprintf("127.0.0.1:%d", 7001+i))
			s.Addr = string(s.Node)
			rec.Servers = append(rec.Servers, &s)
		}
		r, err := Build([]src.Input{in})
		if err != nil {
			t.Fatal(err)
		}
		f := r.Costs[0]
		_, dc := drawnTexts(f)
		return float64(dc.Max.Y - dc.Min.Y), len(f.keyRows(f.w))
	}
	one, rows1 := height(1)
	many, rows12 := height(12)
	if rows12 <= rows1 {
		t.Fatalf("12 servers' keys take %d rows, one server's %d", rows12, rows1)
	}
	if one-many > 0.5 || many-one > 0.5 {
		t.Errorf("the curves' area is %.1f points high with 12 servers, %.1f with one", many, one)
	}
}
