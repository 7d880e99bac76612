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

// BenchmarkWriterPerSample is the writer's cost of one sample of the busy
// real recording (a delta or, every 5 s, a whole line; JSONL through
// zstd): set against a sample's INFO parse (BenchmarkParseInfoInto in
// source) and /proc read (BenchmarkRead in source/procmem), what the
// watcher pays for the same sample.
func BenchmarkWriterPerSample(b *testing.B) {
	evs, h := busySamples(b)
	w, err := NewCompressedWriter(io.Discard, "jsonl", Zstd, *h)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	span := evs[len(evs)-1].Offset + time.Second
	i := 0
	for b.Loop() {
		// Past the recording's end, the same samples again a span later:
		// each node's seq goes on, so deltas stay deltas.
		ev := evs[i%len(evs)]
		lap := time.Duration(i/len(evs)) * span
		s := *ev.Sample
		s.Seq += uint64(i/len(evs)) * uint64(len(evs))
		ev.Offset += lap
		s.Offset, s.At = ev.Offset, h.Epoch.Add(ev.Offset)
		ev.At, ev.Sample = s.At, &s
		if err := w.Write(ev); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
