package costview

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/ui/uitest"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/viewtest"
)

func TestViewAloneCost(t *testing.T) {
	s := viewtest.Store(uitest.TwoSaves())
	c := viewtest.Context(s, uitest.NodeOf(0), uitest.NodeOf(1))
	v := New()
	v.SetSize(120, 24)
	v.SyncKeys(view.Open{Fills: true})
	viewtest.Golden(t, v.View(c))
	// y plots the footprint, through the view's own key.
	if took, _ := v.Update(c, viewtest.Key("y")); !took || !strings.Contains(strings.Join(v.View(c), "\n"), "Y: footprint") {
		t.Errorf("y should switch the view to the footprint")
	}
	v.SyncKeys(view.Open{})
	if took, _ := v.Update(c, viewtest.Key("y")); took {
		t.Errorf("y works only while the view is open")
	}
}
