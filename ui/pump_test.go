package ui_test

import (
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/queue"
	"github.com/vkwatch/vkwatch/ui"
)

// TestPump: every event queued reaches the UI, in order, messages
// come at least a FrameInterval apart however fast events come, and an
// idle pump sends nothing.
func TestPump(t *testing.T) {
	type msg struct {
		at  time.Time
		evs ui.EventsMsg
	}
	got := make(chan msg, 1000)
	q := queue.New[source.Event]()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		ui.Pump(ctx, q, func(m tea.Msg) { got <- msg{time.Now(), m.(ui.EventsMsg)} })
	}()
	const n = 300
	for i := range n {
		q.Push(source.Event{Node: "a", Kind: source.EventSample, Offset: time.Duration(i)})
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // bursts, as samplers' batches come
		}
	}
	var msgs []msg
	seen := 0
	deadline := time.After(30 * time.Second)
	for seen < n {
		select {
		case m := <-got:
			msgs = append(msgs, m)
			for _, ev := range m.evs {
				if ev.Offset != time.Duration(seen) {
					t.Fatalf("event %d came as number %d", ev.Offset, seen)
				}
				seen++
			}
		case <-deadline:
			t.Fatalf("%d of %d events reached the UI within 30 s", seen, n)
		}
	}
	for i := 1; i < len(msgs); i++ {
		if gap := msgs[i].at.Sub(msgs[i-1].at); gap < ui.FrameInterval {
			t.Errorf("messages %d and %d %s apart, want at least %s", i-1, i, gap, ui.FrameInterval)
		}
	}
	// Idle: nothing queued, nothing sent.
	select {
	case m := <-got:
		t.Fatalf("an idle pump sent %d events", len(m.evs))
	case <-time.After(3 * ui.FrameInterval):
	}
	cancel()
	<-done
}
