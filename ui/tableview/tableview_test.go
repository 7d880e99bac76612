package tableview

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

func TestViewAloneTable(t *testing.T) {
	s := viewtest.Store(uitest.ReportsScenario(12))
	c := viewtest.Context(s)
	v := New()
	v.SetSize(120, 14)
	v.SyncKeys(view.Open{Fills: true})
	v.Opened()
	before := strings.Join(v.View(c), "\n")
	if took, _ := v.Update(c, viewtest.Key("up")); !took {
		t.Fatal("up should scroll the table")
	}
	after := v.View(c)
	if strings.Join(after, "\n") == before {
		t.Errorf("up did not scroll:\n%s", before)
	}
	viewtest.Golden(t, after)
}

// BenchmarkTableDraw measures drawing the reports table of 20 reports at
// 200x50, what opening it, scrolling or a new report costs.
func BenchmarkTableDraw(b *testing.B) {
	s := viewtest.Store(uitest.ReportsScenario(20))
	st, reports := viewtest.Context(s).Styles, s.Reports()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = drawTable(st, reports, 200, 30, 0)
	}
}
