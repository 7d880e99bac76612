package queue

import (
	"slices"
	"sync"
	"testing"
)

// TestQueueHandsOverInOrder: values pushed from several goroutines reach
// the one receiver all, each sender's in its order, and a receiver that
// hands its batches back stops allocating.
func TestQueueHandsOverInOrder(t *testing.T) {
	const senders, each = 4, 10000
	q := New[[2]int]()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				q.Push([2]int{s, i})
			}
		})
	}
	next := make([]int, senders)
	var batch [][2]int
	for got := 0; got < senders*each; {
		batch = q.Swap(batch)
		if len(batch) == 0 {
			<-q.Ready()
			continue
		}
		for _, v := range batch {
			if v[1] != next[v[0]] {
				t.Fatalf("sender %d: got %d, want %d", v[0], v[1], next[v[0]])
			}
			next[v[0]]++
		}
		got += len(batch)
	}
	wg.Wait()
	if !slices.Equal(next, []int{each, each, each, each}) {
		t.Fatalf("received %v of each sender's %d", next, each)
	}
	if out := q.Swap(nil); len(out) != 0 {
		t.Fatalf("%d values left after all were received", len(out))
	}

	batch = make([][2]int, 0, 8)
	if allocs := testing.AllocsPerRun(100, func() {
		q.Push([2]int{0, 0})
		q.Push([2]int{0, 1})
		batch = q.Swap(batch)
		<-q.Ready()
	}); allocs != 0 {
		t.Errorf("a warm push and swap allocate %.1f times, want 0", allocs)
	}
}
