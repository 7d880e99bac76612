package record

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// recordedSamples are the sample events of a real recording in testdata
// (two Redis 7.0.15 servers for 40 s at 200 ms, by vkwatch: idle, and busy
// under --writers 2 with a BGSAVE running from the 8th second).
func recordedSamples(b testing.TB, name string) ([]source.Event, *Header) {
	b.Helper()
	rec, err := ReadFile("testdata/" + name + "-two-servers.jsonl.zst")
	if err != nil {
		b.Fatal(err)
	}
	var evs []source.Event
	for _, ev := range rec.Events {
		if ev.Kind == source.EventSample {
			evs = append(evs, ev)
		}
	}
	return evs, &rec.Header
}

// BenchmarkBytesPerSample writes the real recordings again as .zst,
// flushing every second of their time as the live writer does, and
// reports the bytes a sample takes.
func BenchmarkBytesPerSample(b *testing.B) {
	for _, name := range []string{"idle", "busy"} {
		b.Run(name, func(b *testing.B) {
			evs, h := recordedSamples(b, name)
			var size int
			for b.Loop() {
				var buf bytes.Buffer
				w, err := NewWriter(&buf, *h, Options{Compression: Zstd})
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
					if err := w.Write(ev); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				size = buf.Len()
			}
			b.ReportMetric(float64(size)/float64(len(evs)), "B/sample")
		})
	}
}

// BenchmarkWriterPerSample is the writer's cost of one sample of the real
// recordings (a whole JSON line through zstd), shaped as the live writer
// at --interval 10ms with two servers: a flush (the end of a zstd block)
// every 200 samples, a second of them, and a frame every 2,000, ten
// seconds of them. main's writer had a benchmark of the same name and
// shape (over the same recordings): cmd/vkperf/README.md has the ratio.
func BenchmarkWriterPerSample(b *testing.B) {
	for _, name := range []string{"idle", "busy"} {
		b.Run(name, func(b *testing.B) {
			evs, h := recordedSamples(b, name)
			// The recordings are at 200 ms: a frame of 2,000 samples is
			// 200 s of their time.
			w, err := NewWriter(io.Discard, *h, Options{Compression: Zstd, FrameEvery: 200 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			span := evs[len(evs)-1].Offset + time.Second
			i := 0
			var s source.Sample
			for b.Loop() {
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

// BenchmarkReadPerSample is a reader's cost of one sample of the real busy
// recording: its line decoded and its derived figures derived again (the
// save tracker), what a seek and a report pay for each sample they read.
func BenchmarkReadPerSample(b *testing.B) {
	data, err := os.ReadFile("testdata/busy-two-servers.jsonl.zst")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		rec, err := Read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n += len(rec.Events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
}
