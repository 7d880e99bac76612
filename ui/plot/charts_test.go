package plot

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// Where /proc cannot read the child, INFO's copy-on-write says how old
// it is; where /proc reads it, the age of the other figure is no news.
func TestCOWNotesSayINFOsAge(t *testing.T) {
	st := Styles(false)
	s := &source.Sample{COW: source.Some[int64](1 << 20), COWFrom: source.FromInfo, Save: &source.SaveProgress{Kind: source.SaveFork}}
	s.Info.CurrentCOWAge = source.Some[int64](2)
	if got := strings.Join(cowNotes(&st, s), "\n"); !strings.Contains(got, "INFO figure 2s old") {
		t.Errorf("notes %q", got)
	}
	s.Info.CurrentCOWAge = source.Opt[int64]{}
	if got := cowNotes(&st, s); len(got) != 0 {
		t.Errorf("no age field: notes %q", got)
	}
}
