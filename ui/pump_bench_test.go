package ui_test

// BenchmarkPumpFlood shows that samples never queue up behind drawing:
// watchers flood the queue as fast as they can while the pump hands
// batches to the real UI model (Update, then View, at 200x50), as
// bubbletea's loop and renderer would. Reported:
//
//	frames/s             UI messages per second from the pump's start to its
//	                     last message: at most 1/ui.FrameInterval = 20
//	max_events/frame     the largest batch (how much piled up in one frame)
//	max_wait_ms          longest an event waited in the queue before Update
//	max_drawn_ms         longest from an event's arrival to the end of its frame's View
//
// Run with: go test ./ui -run '^$' -bench PumpFlood -benchtime 2s

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/queue"
	"github.com/vkwatch/vkwatch/ui"
)

func BenchmarkPumpFlood(b *testing.B) {
	var m tea.Model = ui.New(ui.Config{Nodes: []ui.Node{{ID: "0", Addr: "127.0.0.1:6379"}, {ID: "1", Addr: "127.0.0.1:6380"}}, Send: func(source.NodeID, ...string) {}})
	m, _ = m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})

	var (
		frames, maxBatch  int
		maxWait, maxDrawn time.Duration
		lastFrame         time.Time
	)
	delivered := make(chan struct{}, 1)
	var got atomic.Int64 // events that reached the UI
	send := func(msg tea.Msg) {
		evs := msg.(ui.EventsMsg)
		now := time.Now()
		oldest := now
		for _, ev := range evs {
			if ev.At.Before(oldest) {
				oldest = ev.At
			}
		}
		m, _ = m.Update(msg)
		if len(m.View()) == 0 {
			b.Error("empty view")
		}
		frames++
		lastFrame = time.Now()
		maxBatch = max(maxBatch, len(evs))
		maxWait = max(maxWait, now.Sub(oldest))
		maxDrawn = max(maxDrawn, lastFrame.Sub(oldest))
		got.Add(int64(len(evs)))
		select {
		case delivered <- struct{}{}:
		default:
		}
	}

	q := queue.New[source.Event]()
	ctx, cancel := context.WithCancel(context.Background())
	// The pump's ticker starts after this: frames over the time since
	// cannot exceed its rate, however the ticks bunch after a slow Update.
	pumpStart := time.Now()
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		ui.Pump(ctx, q, send)
	}()

	// Two watchers, one per server, each sample 200 ms after the previous
	// one in the monitor's time (so the charts' history stays the window's
	// size) but sent as fast as the producer can make them.
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := (b.N + 1) / 2
	for srv := range 2 {
		wg.Go(func() {
			for i := range per {
				off := time.Duration(i) * 200 * time.Millisecond
				q.Push(source.Event{Node: []source.NodeID{"0", "1"}[srv], Kind: source.EventSample, Offset: off, At: time.Now(),
					Sample: floodSample(uint64(i), off)})
			}
		})
	}
	wg.Wait()
	// The flood is over: what is left must reach the UI within a frame or two.
	drainBy := time.Now().Add(10 * time.Second)
	for total := int64(2 * per); got.Load() < total; {
		if time.Now().After(drainBy) {
			b.Fatalf("%d events not in the UI 10 s after the flood", total-got.Load())
		}
		select {
		case <-delivered:
		case <-time.After(time.Second):
		}
	}
	b.StopTimer()
	cancel()
	<-pumped

	if frames > 0 {
		b.ReportMetric(float64(frames)/lastFrame.Sub(pumpStart).Seconds(), "frames/s")
	}
	b.ReportMetric(float64(maxBatch), "max_events/frame")
	b.ReportMetric(float64(maxWait)/float64(time.Millisecond), "max_wait_ms")
	b.ReportMetric(float64(maxDrawn)/float64(time.Millisecond), "max_drawn_ms")
}

// floodSample is a plausible sample: everything a pane draws is present.
func floodSample(seq uint64, off time.Duration) *source.Sample {
	used := int64(100<<20) + int64(seq%64)<<16
	return &source.Sample{
		Seq: seq, Offset: off,
		Info: source.Info{
			Version: "7.0.15", Role: "master",
			UsedMemory: source.Some(used), RSS: source.Some(used + 12<<20), CurrentCOW: source.Some[int64](0),
		},
		OpsPerSec: source.Some(50000 + float64(seq%100)),
		Ping:      source.Latency{Count: 100, Min: 40 * time.Microsecond, P50: 90 * time.Microsecond, P99: 200 * time.Microsecond, Max: 400 * time.Microsecond},
		Ping10s:   source.Latency{Count: 5000, Min: 40 * time.Microsecond, P50: 90 * time.Microsecond, P99: 300 * time.Microsecond, Max: 2 * time.Millisecond},
	}
}
