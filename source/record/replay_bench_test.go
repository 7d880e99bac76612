package record

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// synthFile writes span of six servers sampled every 200ms as .zst, from
// the real v2 recording's samples (values moved a little each sample).
func synthFile(b *testing.B, span time.Duration) string {
	data, err := os.ReadFile("testdata/v2-two-servers.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	rec, err := Read(bytesReader(data))
	if err != nil {
		b.Fatal(err)
	}
	var smp []*source.Sample
	for _, ev := range rec.Events {
		if ev.Kind == source.EventSample {
			smp = append(smp, ev.Sample)
		}
	}
	path := filepath.Join(b.TempDir(), "day.jsonl.zst")
	f, _ := os.Create(path)
	w, _ := NewCompressedWriter(f, "jsonl", Zstd, rec.Header)
	seq := uint64(0)
	for off := time.Duration(0); off < span; off += 200 * time.Millisecond {
		seq++
		for n := range 6 {
			s := *smp[int(seq)%len(smp)]
			s.Seq, s.Offset, s.At = seq, off, rec.Header.Epoch.Add(off)
			s.Info.UsedMemory.V += int64(seq)
			w.Write(source.Event{Node: source.NodeID("n" + strconv.Itoa(n)), Kind: source.EventSample, Offset: off, At: s.At, Sample: &s})
		}
	}
	w.Close()
	f.Close()
	return path
}

// BenchmarkReplayOpenAndSeek: OpenFile (the index) and a seek's read of
// two minutes of history before a point in the middle, for recordings of
// different lengths: neither should grow with the length.
func BenchmarkReplayOpenAndSeek(b *testing.B) {
	for _, span := range []time.Duration{10 * time.Minute, time.Hour} {
		path := synthFile(b, span)
		fi, _ := os.Stat(path)
		b.Run("open/"+span.String(), func(b *testing.B) {
			for b.Loop() {
				rf, err := OpenFile(path)
				if err != nil {
					b.Fatal(err)
				}
				rf.Close()
			}
			b.ReportMetric(float64(fi.Size())/float64(span/(200*time.Millisecond)*6), "B/sample")
		})
		b.Run("seek/"+span.String(), func(b *testing.B) {
			rf, _ := OpenFile(path)
			defer rf.Close()
			target := span / 2
			for b.Loop() {
				sc, _ := rf.ScanFrom(target - 2*time.Minute)
				for sc.Next() && sc.Event().Offset < target {
				}
				sc.Close()
			}
		})
	}
}

func bytesReader(b []byte) *bytesR { return &bytesR{b: b} }

type bytesR struct{ b []byte }

func (r *bytesR) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
