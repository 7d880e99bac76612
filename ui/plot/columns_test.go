package plot

import (
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/uitest"
)

// TestColumnsShiftMatchesRecompute: columns carried over as the right edge
// moves on (shifted left, then the new samples added) are the columns
// computed afresh from every sample, frame after frame, through a
// disconnection's hole and late samples; after the store's Reset they are computed again.
func TestColumnsShiftMatchesRecompute(t *testing.T) {
	const (
		window = 6 * time.Second
		w      = 12 // cells: 500 ms a cell at this window, 250 ms a column
	)
	st := store.New(store.Config{Columns: StoreColumns()})
	f := uitest.NewFake(0, false)
	carried := NewColumns()
	shifted := 0
	check := func(now time.Duration) {
		t.Helper()
		v := st.View(uitest.NodeOf(0))
		before := carried.colsFor
		carried.Fill(v, now, window, Cadence{Interval: uitest.Tick, Rest: uitest.Tick}, w)
		if carried.colsOK && before.right != 0 && carried.colsFor.right > before.right {
			shifted++
		}
		fresh := NewColumns()
		fresh.Fill(v, now, window, Cadence{Interval: uitest.Tick, Rest: uitest.Tick}, w)
		if !reflect.DeepEqual(carried.sub, fresh.sub) || !reflect.DeepEqual(carried.cells, fresh.cells) {
			t.Fatalf("at %s: carried-over columns differ from columns computed afresh:\ncarried %v\nfresh   %v",
				now, carried.sub[0], fresh.sub[0])
		}
	}
	add := func(off time.Duration) {
		st.Add(source.Event{Node: uitest.NodeOf(0), Kind: source.EventSample, Offset: off, At: uitest.Epoch.Add(off), Sample: f.Sample(off)})
	}
	for off := uitest.Tick; off <= 60*time.Second; off += uitest.Tick {
		if off > 30*time.Second && off < 33*time.Second {
			continue // a hole of 3 s: the line breaks
		}
		if m := off % (1700 * time.Millisecond); m > 0 && m <= 2*uitest.Tick {
			continue // two late samples: the columns between take the value before
		}
		add(off)
		// A frame now and then, as the batcher hands over several samples.
		if off%(3*uitest.Tick) == 0 {
			check(off)
		}
	}
	if shifted < 10 {
		t.Fatalf("the right edge moved on %d times, want at least 10: the test does not exercise the shift", shifted)
	}
	// A replay seeking: the history is fed again from elsewhere.
	st.Reset(0)
	for off := 40 * time.Second; off <= 50*time.Second; off += uitest.Tick {
		add(off)
	}
	check(61 * time.Second)
}

// TestColumnsRestInterval: samples a second apart (a server at rest,
// --idle-interval) draw an unbroken line when the cadence says a second
// at rest, with the columns between taking the value before; at a cadence
// of 200 ms at rest the same gaps are holes. A hole longer than three
// rest intervals breaks the line either way.
func TestColumnsRestInterval(t *testing.T) {
	const (
		fine   = 200 * time.Millisecond
		window = 20 * time.Second
		w      = 40 // 500 ms a cell, 250 ms a column
	)
	st := store.New(store.Config{Columns: StoreColumns()})
	f := uitest.NewFake(0, false)
	for off := time.Second; off <= 20*time.Second; off += time.Second {
		if off > 10*time.Second && off < 15*time.Second {
			continue // a hole of 5 s: a disconnection
		}
		st.Add(source.Event{Node: uitest.NodeOf(0), Kind: source.EventSample, Offset: off, At: uitest.Epoch.Add(off), Sample: f.Sample(off)})
	}
	v := st.View(uitest.NodeOf(0))
	breaks := func(c Cadence) (n int) {
		cols := NewColumns()
		cols.Fill(v, 20*time.Second, window, c, w)
		for _, b := range cols.sub[0].Brk {
			if b {
				n++
			}
		}
		return n
	}
	if got := breaks(Cadence{Interval: fine, Rest: time.Second}); got != 1 {
		t.Errorf("at rest every second: %d breaks in the line, want 1 (the 5 s hole)", got)
	}
	if got := breaks(Cadence{Interval: fine, Rest: fine}); got < 10 {
		t.Errorf("at rest every 200ms: %d breaks, want one at every 1 s gap", got)
	}
}
