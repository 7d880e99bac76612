package ui

import (
	"testing"

	"github.com/vkwatch/vkwatch/ui/panesview"
	"github.com/vkwatch/vkwatch/ui/plain"
)

// TestPlainWidthIsAPanes: vkwatch save lays its report out as a pane at
// 200x50 with two servers does (plain text and the screen say one thing
// one way); ui/plain, which may import no view, keeps the pane's chrome
// as a number, and this holds it to the panes view's.
func TestPlainWidthIsAPanes(t *testing.T) {
	if want := 100 - panesview.Chrome; plain.Width != want {
		t.Errorf("plain.Width %d, a pane's inside at 200x50 with two servers is %d", plain.Width, want)
	}
}
