package record

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// longEvents is a recording's worth of samples of two nodes every 200ms
// over span: enough for several frames, and for a plain file of MiBs.
func longEvents(t *testing.T, epoch time.Time, span time.Duration) []source.Event {
	base := fullEvents(t, epoch, 5)
	var smp *source.Sample
	for _, ev := range base {
		if ev.Kind == source.EventSample && ev.Sample != nil && ev.Sample.Info.UsedMemory.OK {
			smp = ev.Sample
		}
	}
	var evs []source.Event
	for off := time.Duration(0); off < span; off += 200 * time.Millisecond {
		for i, node := range []source.NodeID{"n1", "n2"} {
			o := off + time.Duration(i)*time.Millisecond
			s := *smp
			s.Seq, s.Offset, s.At = uint64(off/(100*time.Millisecond)), o, epoch.Add(o)
			s.Info.UsedMemory.V = int64(o)
			evs = append(evs, source.Event{Node: node, Kind: source.EventSample, Offset: o, At: epoch.Add(o), Sample: &s})
		}
	}
	return evs
}

func TestFileIndexSeeks(t *testing.T) {
	epoch := time.Now().Round(0)
	evs := longEvents(t, epoch, 65*time.Second)
	dir := t.TempDir()
	defer func(n int64) { plainMarkEvery = n }(plainMarkEvery)
	plainMarkEvery = 128 << 10
	for _, c := range []Compression{Zstd, Plain, Gzip} {
		path := filepath.Join(dir, "r.jsonl"+map[Compression]string{Zstd: ".zst", Gzip: ".gz"}[c])
		if err := os.WriteFile(path, writeCompressed(t, c, testHeader(epoch), evs, false), 0o644); err != nil {
			t.Fatal(err)
		}
		rf, err := OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if rf.Start != evs[0].Offset || rf.End != evs[len(evs)-1].Offset {
			t.Errorf("%s: span %s..%s, want %s..%s", c, rf.Start, rf.End, evs[0].Offset, evs[len(evs)-1].Offset)
		}
		if c != Gzip && len(rf.Marks) < 5 {
			t.Errorf("%s: %d marks over %s", c, len(rf.Marks), rf.End)
		}
		for _, at := range []time.Duration{0, 31*time.Second + 250*time.Millisecond, 64 * time.Second} {
			sc, err := rf.ScanFrom(at)
			if err != nil {
				t.Fatal(err)
			}
			if !sc.Next() {
				t.Fatalf("%s: nothing read from %s: %v", c, at, sc.Err())
			}
			first := sc.Event()
			if first.Offset > at || (c != Gzip && at-first.Offset > 20*time.Second) {
				t.Errorf("%s: a scan for %s starts at %s", c, at, first.Offset)
			}
			// From there on, the very events written.
			k := 0
			for k < len(evs) && evs[k].Offset != first.Offset {
				k++
			}
			for n := 0; ; n++ {
				if k+n >= len(evs) {
					if sc.Next() {
						t.Fatalf("%s: more events than written", c)
					}
					break
				}
				if n > 0 && !sc.Next() {
					t.Fatalf("%s: scan from %s ended after %d events: %v", c, at, n, sc.Err())
				}
				if !reflect.DeepEqual(norm(evs[k+n]), norm(sc.Event())) {
					t.Fatalf("%s: scan from %s: event %d differs", c, at, n)
				}
			}
			sc.Close()
		}
		rf.Close()
	}
}
