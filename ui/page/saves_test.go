package page

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	src "github.com/vkwatch/vkwatch/source/report"
)

// TestPeakAtAsThePaneSaysIt: the page's "peak at" is the save's
// progress when its copy-on-write peaked, as the pane and the reports
// table say it (source.SaveReport.PeakProgress): n/a for a peak seen
// before the server reported any key written (a short save: its 0 keys
// are no reading), and the progress a sample saw with the peak however
// few progress reports the save had.
func TestPeakAtAsThePaneSaysIt(t *testing.T) {
	short := source.SaveReport{Kind: source.SaveFork, COWFrom: source.FromRDBLastCOW, COW: source.Some[int64](624 << 10),
		PeakCOW: source.Some[int64](624 << 10), PeakCOWFrom: source.FromProc, PeakAtProgress: source.Some(0.0),
		Curve: []source.CurvePoint{{Progress: 0, COW: source.Some[int64](624 << 10)}}}
	two := short
	two.PeakAtProgress = source.Some(0.62)
	two.Curve = []source.CurvePoint{{Progress: 0.62, COW: source.Some[int64](600 << 10)}, {Progress: 1}}
	forkless := two
	forkless.Kind, forkless.COWFrom = source.SaveForkless, source.FromNoChild
	for _, c := range []struct {
		name string
		r    source.SaveReport
		want string
	}{{"peak before the first progress", short, "n/a"}, {"two progress reports", two, "62 %"}, {"forkless", forkless, "n/a"}} {
		row := saveRowOf(1, &src.Server{Addr: "127.0.0.1:7001"}, &src.Save{SaveReport: c.r}, "", time.Time{})
		if row.PeakAt.Text != c.want {
			t.Errorf("%s: peak at %q, want %q", c.name, row.PeakAt.Text, c.want)
		}
	}
}
