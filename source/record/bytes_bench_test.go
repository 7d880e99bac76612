package record

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// BenchmarkBytesPerSample re-records real recordings (testdata: two Redis
// 7.0.15 servers for 40 s at the default 200 ms, recorded by vkwatch -
// idle, and under --writers 2 with a BGSAVE running most of the time)
// through today's Writer, as .zst, flushing once a second of recording
// time as the live writer does, and reports the bytes a sample takes.
func BenchmarkBytesPerSample(b *testing.B) {
	for _, name := range []string{"idle", "busy"} {
		b.Run(name, func(b *testing.B) {
			rf, err := OpenFile("testdata/" + name + "-two-servers.jsonl.zst")
			if err != nil {
				b.Fatal(err)
			}
			defer rf.Close()
			var evs []source.Event
			sc, err := rf.ScanFrom(0)
			if err != nil {
				b.Fatal(err)
			}
			for sc.Next() {
				evs = append(evs, sc.Event())
			}
			sc.Close()
			var size, samples int
			for b.Loop() {
				size, samples = rerecord(b, rf.Header, evs)
			}
			b.ReportMetric(float64(size)/float64(samples), "B/sample")
			b.ReportMetric(float64(samples), "samples")
		})
	}
}

// rerecord writes evs as a .zst recording, flushing at every second of
// their offsets, and returns its size and number of samples.
func rerecord(b *testing.B, h Header, evs []source.Event) (size, samples int) {
	var buf bytes.Buffer
	w, err := NewCompressedWriter(&buf, "jsonl", Zstd, h)
	if err != nil {
		b.Fatal(err)
	}
	var flushed time.Duration
	for _, ev := range evs {
		if ev.Offset-flushed >= flushEvery {
			w.mu.Lock()
			w.flushLocked()
			w.mu.Unlock()
			flushed = ev.Offset
		}
		if ev.Kind == source.EventSample {
			samples++
		}
		if err := w.Write(ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Len(), samples
}

// BenchmarkWriterPerSample is the writer's cost of one sample of the real
// recordings (idle and busy; a delta or, every 5 s, a whole line; JSONL
// through zstd): set against a sample's INFO parse (BenchmarkParseInfoInto
// in source) and /proc read (BenchmarkRead in source/procmem), what the
// watcher pays for the same sample. Shaped as the live writer at
// --interval 10ms with two servers, where the writer's CPU bound is
// measured (README, "The writer's CPU"): a flush (the end of a zstd block)
// every 200 samples, a second of them, and a frame every 2,000, ten
// seconds of them.
func BenchmarkWriterPerSample(b *testing.B) {
	for _, name := range []string{"idle", "busy"} {
		b.Run(name, func(b *testing.B) {
			evs, h := recordedSamples(b, name)
			// The recordings are at 200 ms: a frame of 2,000 samples is
			// 200 s of their time.
			defer func(f time.Duration) { frameEvery = f }(frameEvery)
			frameEvery = 200 * time.Second
			w, err := NewCompressedWriter(io.Discard, "jsonl", Zstd, *h)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			span := evs[len(evs)-1].Offset + time.Second
			i := 0
			var s source.Sample // one copy for all (the writer keeps none)
			for b.Loop() {
				// Past the recording's end, the same samples again a span
				// later: each node's seq goes on, so deltas stay deltas.
				ev := evs[i%len(evs)]
				lap := i / len(evs)
				s = *ev.Sample
				s.Seq += uint64(lap) * uint64(len(evs))
				ev.Offset += time.Duration(lap) * span
				s.Offset, s.At = ev.Offset, h.Epoch.Add(ev.Offset)
				ev.At, ev.Sample = s.At, &s
				if err := w.Write(ev); err != nil {
					b.Fatal(err)
				}
				if i++; i%200 == 0 {
					w.mu.Lock()
					w.flushLocked()
					w.mu.Unlock()
				}
			}
		})
	}
}
