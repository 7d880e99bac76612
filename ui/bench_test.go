package ui

import (
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// fullModel is two panes at 200x50 with a full two-minute history.
func fullModel(tb testing.TB) (Model, *uitest.Fake, time.Duration) {
	tb.Helper()
	m := newTestModel(uitest.AddrA, uitest.AddrB)
	m = sized(m, 200, 50)
	until := 2 * time.Minute
	m = feed(tb, m, uitest.Scenario(2, until))
	return m, uitest.NewFake(0, false), until
}

// BenchmarkView measures what bubbletea pays per frame: View of two panes
// at 200x50 with a full history. It must stay far below a millisecond,
// which is why View only returns the frame Update drew.
func BenchmarkView(b *testing.B) {
	m, _, _ := fullModel(b)
	BenchView(b, m)
}

// BenchView measures m's View, which returns the frame Update drew. It is
// generic so that a Model is called as itself, not through tea.Model, and
// exported (from a test file) for the frame benchmarks of package ui_test.
func BenchView[M interface{ View() string }](b *testing.B, m M) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if len(m.View()) == 0 {
			b.Fatal("empty view")
		}
	}
}

// BenchmarkUpdateSample measures folding one sample and redrawing its pane.
func BenchmarkUpdateSample(b *testing.B) {
	m, f, off := fullModel(b)
	f.Seq = 1 << 20
	var tm Model = m
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		off += uitest.Tick
		ev := f.SampleEvent(off)
		nm, _ := tm.Update(EventMsg(ev))
		tm = nm.(Model)
	}
	_ = source.EventSample
}

// BenchmarkUpdateSampleTableOpen measures folding one sample while the
// reports table is open (20 reports): the table is drawn once and reused,
// so this must cost no more than with the panes shown.
func BenchmarkUpdateSampleTableOpen(b *testing.B) {
	m := sized(newTestModel(uitest.AddrA, uitest.AddrB), 200, 50)
	m = feed(b, m, uitest.ReportsScenario(20))
	m, _ = press(m, "r")
	f := uitest.NewFake(0, false)
	f.Seq = 1 << 20
	off := 200 * time.Second
	var tm Model = m
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		off += uitest.Tick
		nm, _ := tm.Update(EventMsg(f.SampleEvent(off)))
		tm = nm.(Model)
	}
}
