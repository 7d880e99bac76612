// Package queue is the unbounded hand-off of values from any number of
// goroutines to one: the watcher's events to its emitter, a fleet's events
// to Drive, a monitor's events to the UI (ui.Pump).
package queue

import "sync"

// Queue hands values from any number of goroutines to one, in the order
// they were pushed, and never blocks a sender (it grows instead).
type Queue[T any] struct {
	mu    sync.Mutex
	items []T
	ready chan struct{}
}

// New returns an empty queue.
func New[T any]() *Queue[T] { return &Queue[T]{ready: make(chan struct{}, 1)} }

// Push queues v and wakes the receiver.
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Swap returns what is queued and queues from now on into buf[:0]: a
// receiver that hands back the batch it is done with allocates nothing
// once its batches are large enough (nil gives the queue a fresh slice).
func (q *Queue[T]) Swap(buf []T) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = buf[:0]
	return out
}

// Ready receives after a Push, at least once for pushes since the last
// receive: the receiver waits on it when a Swap returned nothing.
func (q *Queue[T]) Ready() <-chan struct{} { return q.ready }
