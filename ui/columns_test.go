package ui

import (
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
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
	st := store.New(store.Config{Columns: metricColumns()})
	f := newFake(0, false)
	carried := newColumns()
	shifted := 0
	check := func(now time.Duration) {
		t.Helper()
		v := st.View(nodeOf(0))
		before := carried.colsFor
		carried.fill(v, now, window, cadence{tick, tick}, w)
		if carried.colsOK && before.right != 0 && carried.colsFor.right > before.right {
			shifted++
		}
		fresh := newColumns()
		fresh.fill(v, now, window, cadence{tick, tick}, w)
		if !reflect.DeepEqual(carried.sub, fresh.sub) || !reflect.DeepEqual(carried.cells, fresh.cells) {
			t.Fatalf("at %s: carried-over columns differ from columns computed afresh:\ncarried %v\nfresh   %v",
				now, carried.sub[0], fresh.sub[0])
		}
	}
	add := func(off time.Duration) {
		st.Add(source.Event{Node: nodeOf(0), Kind: source.EventSample, Offset: off, At: epoch.Add(off), Sample: f.sample(off)})
	}
	for off := tick; off <= 60*time.Second; off += tick {
		if off > 30*time.Second && off < 33*time.Second {
			continue // a hole of 3 s: the line breaks
		}
		if m := off % (1700 * time.Millisecond); m > 0 && m <= 2*tick {
			continue // two late samples: the columns between take the value before
		}
		add(off)
		// A frame now and then, as the batcher hands over several samples.
		if off%(3*tick) == 0 {
			check(off)
		}
	}
	if shifted < 10 {
		t.Fatalf("the right edge moved on %d times, want at least 10: the test does not exercise the shift", shifted)
	}
	// A replay seeking: the history is fed again from elsewhere.
	st.Reset(0)
	for off := 40 * time.Second; off <= 50*time.Second; off += tick {
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
	st := store.New(store.Config{Columns: metricColumns()})
	f := newFake(0, false)
	for off := time.Second; off <= 20*time.Second; off += time.Second {
		if off > 10*time.Second && off < 15*time.Second {
			continue // a hole of 5 s: a disconnection
		}
		st.Add(source.Event{Node: nodeOf(0), Kind: source.EventSample, Offset: off, At: epoch.Add(off), Sample: f.sample(off)})
	}
	v := st.View(nodeOf(0))
	breaks := func(c cadence) (n int) {
		cols := newColumns()
		cols.fill(v, 20*time.Second, window, c, w)
		for _, b := range cols.sub[0].Brk {
			if b {
				n++
			}
		}
		return n
	}
	if got := breaks(cadence{fine, time.Second}); got != 1 {
		t.Errorf("at rest every second: %d breaks in the line, want 1 (the 5 s hole)", got)
	}
	if got := breaks(cadence{fine, fine}); got < 10 {
		t.Errorf("at rest every 200ms: %d breaks, want one at every 1 s gap", got)
	}
}

func TestSamplingNote(t *testing.T) {
	for _, c := range []struct {
		rest, fine time.Duration
		want       string
	}{
		{time.Second, 200 * time.Millisecond, "INFO every 1s, 200ms while saving"},
		{200 * time.Millisecond, 200 * time.Millisecond, "INFO every 200ms"},
		{time.Second, 0, "INFO every 1s"},
	} {
		if got := samplingNote(c.rest, c.fine, "while saving"); got != c.want {
			t.Errorf("samplingNote(%s, %s) = %q, want %q", c.rest, c.fine, got, c.want)
		}
	}
}
