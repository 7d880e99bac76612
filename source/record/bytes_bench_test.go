package record

import (
	"bytes"
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
