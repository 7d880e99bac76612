package store_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/source/watch/watchtest"
)

// BenchmarkStoreMemory is what the history store holds per node at the
// default history (2 minutes of samples every 200 ms, and a little more so
// that pruning runs), fed samples a real redis-server gave a real watcher:
// heap bytes per node after a GC, for a fleet of 100, with a column per
// chart as the UI keeps (ui.metricColumns: six).
//
//	go test ./source/store -run '^$' -bench StoreMemory -benchtime 3x
func BenchmarkStoreMemory(b *testing.B) {
	const nodes, perNode = 100, 700
	tmpl := realSamples(b, 20)
	var perNodeBytes float64
	for b.Loop() {
		before := heapInUse()
		st := store.New(store.Config{Columns: chartColumns})
		for i := range nodes {
			feedNode(st, source.NodeID(rune('A'+i%26))+source.NodeID(rune('0'+i/26)), tmpl, perNode)
		}
		after := heapInUse()
		perNodeBytes = float64(after-before) / nodes
		runtime.KeepAlive(st)
	}
	b.ReportMetric(perNodeBytes, "bytes/node")
}

// chartColumns read what the UI's six charts draw.
var chartColumns = []store.Column{
	optInt(func(s *source.Sample) source.Opt[int64] { return s.Footprint }),
	optInt(func(s *source.Sample) source.Opt[int64] { return s.COW }),
	optInt(func(s *source.Sample) source.Opt[int64] { return s.Info.RSS }),
	optInt(func(s *source.Sample) source.Opt[int64] { return s.Info.UsedMemory }),
	func(s *source.Sample) (float64, bool) { return s.OpsPerSec.Get() },
	func(s *source.Sample) (float64, bool) { return float64(s.Ping.Worst()), s.Ping.Count > 0 },
}

func optInt(get func(s *source.Sample) source.Opt[int64]) store.Column {
	return func(s *source.Sample) (float64, bool) {
		v, ok := get(s).Get()
		return float64(v), ok
	}
}

// feedNode adds n samples 200 ms apart to the store for id, each a copy of
// one of tmpl (the way a watcher makes a new Sample every interval).
func feedNode(st *store.Store, id source.NodeID, tmpl []*source.Sample, n int) {
	for j := range n {
		s := new(source.Sample)
		*s = *tmpl[j%len(tmpl)]
		s.Seq = uint64(j + 1)
		s.Offset = time.Duration(j) * 200 * time.Millisecond
		s.At = time.Unix(0, 0).Add(s.Offset)
		if s.Save != nil {
			sv := *s.Save
			s.Save = &sv
		}
		st.Add(source.Event{Kind: source.EventSample, Node: id, Offset: s.Offset, Sample: s})
	}
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// realSamples are n samples a real watcher took of a real server.
func realSamples(t testing.TB, n int) []*source.Sample {
	t.Helper()
	srv := servertest.StartDefault(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, _, _ := watchtest.Connect(t, ctx, srv.Addr, watch.Config{Interval: 10 * time.Millisecond})
	// Closed as realSamples returns, not only at the end (Connect): the
	// benchmark measures the heap after.
	defer w.Close()
	samples := make(chan *source.Sample, n)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		w.Run(runCtx, func(ev source.Event) {
			if ev.Kind == source.EventSample && ev.Sample != nil {
				select {
				case samples <- ev.Sample:
				default:
				}
			}
		})
	})
	defer func() { stop(); wg.Wait() }()
	out := make([]*source.Sample, 0, n)
	for len(out) < n {
		select {
		case s := <-samples:
			out = append(out, s)
		case <-ctx.Done():
			t.Fatalf("%d samples of %d from the server", len(out), n)
		}
	}
	return out
}
