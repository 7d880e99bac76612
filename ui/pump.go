package ui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/queue"
)

// FrameInterval is the least time between two EventsMsgs Pump sends, so
// between two frames they cause: a human rate (20 a second), however fast
// samples and PINGs come.
const FrameInterval = 50 * time.Millisecond

// Pump hands what q queues to the UI as EventsMsgs through send (a
// tea.Program's Send) until ctx ends: when some came, at most once a
// FrameInterval, so samples never queue up behind drawing. Events that
// come within a frame of the last message wait for the rest of it and go
// together. An idle pump wakes only when events come (five times a second
// for a sampler at defaults), not at every frame.
func Pump(ctx context.Context, q *queue.Queue[source.Event], send func(tea.Msg)) {
	wait := time.NewTimer(FrameInterval)
	wait.Stop()
	defer wait.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.Ready():
		}
		if d := FrameInterval - time.Since(last); !last.IsZero() && d > 0 {
			wait.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-wait.C:
			}
		}
		// A fresh slice each time: the model keeps the batch it is
		// given until Update has run, on bubbletea's goroutine.
		if evs := q.Swap(nil); len(evs) > 0 {
			send(EventsMsg(evs))
			last = time.Now()
		}
	}
}
