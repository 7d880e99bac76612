package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
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
		if c != Plain && len(rf.Marks) < 5 {
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
			if first.Offset > at || at-first.Offset > 20*time.Second {
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

// TestTrailer: a .zst or .gz recording closed by the Writer carries a
// trailer whose marks are the very marks the walk of its frames (members)
// finds; a file whose trailer is missing or does not hold together is
// walked instead, and reads the same; cut short inside a frame mark, the
// walk finds the marks before it (checkCutsInsideMarks).
func TestTrailer(t *testing.T) {
	epoch := time.Now().Round(0)
	evs := longEvents(t, epoch, 65*time.Second)
	dir := t.TempDir()
	for _, c := range []Compression{Zstd, Gzip} {
		data := writeCompressed(t, c, testHeader(epoch), evs, false)
		open := func(name string, data []byte) *File { return openBytes(t, filepath.Join(dir, name), data) }
		ext := map[Compression]string{Zstd: ".zst", Gzip: ".gz"}[c]
		rf := open("whole.jsonl"+ext, data)
		marks, ok := rf.readTrailer()
		if !ok {
			t.Fatalf("%s: the Writer's recording has no trailer a reader takes", c)
		}
		walked := &File{f: rf.f, size: rf.size}
		if c == Zstd {
			if err := walked.walkZstd(); err != nil {
				t.Fatal(err)
			}
		} else {
			walked.walkGzip()
		}
		if len(marks) < 5 || !reflect.DeepEqual(marks, walked.Marks) {
			t.Fatalf("%s: trailer marks %v, the walk finds %v", c, marks, walked.Marks)
		}
		// Without the trailer (cut out, the end mark kept), and with its
		// length field wrong: walked, the same marks and span.
		end, tr, lenAt := len(zstdEndMark()), len(zstdTrailer(marks)), len(data)-len(zstdEndMark())-8
		if c == Gzip {
			end, tr = len(gzipEndMember(0)), len(gzipTrailer(marks))
			lenAt = len(data) - end + 16
		}
		without := append(bytes.Clone(data[:len(data)-end-tr]), data[len(data)-end:]...)
		bad := bytes.Clone(data)
		bad[lenAt]++
		for name, d := range map[string][]byte{"without.jsonl" + ext: without, "bad.jsonl" + ext: bad} {
			other := open(name, d)
			if _, ok := other.readTrailer(); ok {
				t.Errorf("%s: a trailer was taken", name)
			}
			if !reflect.DeepEqual(other.Marks, rf.Marks) || other.Start != rf.Start || other.End != rf.End || other.Truncated {
				t.Errorf("%s: marks %v span %s..%s truncated %v; with the trailer %v %s..%s", name, other.Marks, other.Start, other.End, other.Truncated, rf.Marks, rf.Start, rf.End)
			}
		}
		checkCutsInsideMarks(t, dir, c, data, marks)
	}
}

// TestGzipLongTrailer: a trailer longer than one gzip extra field holds
// (64 KiB: about a day and a half of marks) is written in pieces and read
// back whole, and its members read as nothing.
func TestGzipLongTrailer(t *testing.T) {
	var marks []Mark
	for i := range 20000 {
		marks = append(marks, Mark{T: time.Duration(i) * 10 * time.Second, Pos: int64(i) * 40000})
	}
	tr := gzipTrailer(marks)
	if n := bytes.Count(tr, []byte{0x1f, 0x8b, 8, 4}); n < 2 {
		t.Fatalf("a trailer of %d marks (%d bytes) in %d members", len(marks), len(tr), n)
	}
	data := append(make([]byte, marks[len(marks)-1].Pos+1), tr...)
	data = append(data, gzipEndMember(uint32(len(tr)))...)
	path := filepath.Join(t.TempDir(), "long.gz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rf := &File{f: f, size: int64(len(data)), Comp: Gzip}
	got, ok := rf.readTrailer()
	if !ok || !reflect.DeepEqual(got, marks) {
		t.Fatalf("read back %d marks (ok %v), wrote %d", len(got), ok, len(marks))
	}
	d, err := decompress(bytes.NewReader(append(tr, gzipEndMember(uint32(len(tr)))...)))
	if err != nil {
		t.Fatal(err)
	}
	defer d.done()
	if n, err := io.Copy(io.Discard, d.r); n != 0 || err != nil || !d.ended() {
		t.Fatalf("the trailer's members read as %d bytes (%v), ended %v", n, err, d.ended())
	}
}

// markEnd is where the mark at m.Pos ends in a compressed recording's
// bytes: after a zstd skippable frame's 8-byte header and its payload, or
// after a gzip member header's 10 bytes, its extra field's 2-byte length
// and the field. A reader of a file cut before it cannot read the mark.
func markEnd(c Compression, data []byte, m Mark) int {
	at := int(m.Pos)
	if c == Zstd {
		return at + 8 + int(binary.LittleEndian.Uint32(data[at+4:]))
	}
	return at + 12 + int(binary.LittleEndian.Uint16(data[at+10:]))
}

// marksWhole are the marks of a recording cut at cut whose own bytes
// come whole before it: those a reader of the cut file finds.
func marksWhole(c Compression, data []byte, marks []Mark, cut int) []Mark {
	var whole []Mark
	for _, m := range marks {
		if markEnd(c, data, m) <= cut {
			whole = append(whole, m)
		}
	}
	return whole
}

// checkCutsInsideMarks cuts data, a recording of c whose marks are marks,
// at every byte around its second and third marks: each cut opens with
// exactly the marks whose own bytes are whole (a mark cut inside is not
// taken, its time cannot be read; the one before it is) and as cut short.
func checkCutsInsideMarks(t *testing.T, dir string, c Compression, data []byte, marks []Mark) {
	t.Helper()
	inside := 0
	for _, m := range marks[1:3] {
		for cut := int(m.Pos) - 2; cut <= markEnd(c, data, m)+2; cut++ {
			cf := openBytes(t, filepath.Join(dir, fmt.Sprintf("cut%d.jsonl.%s", cut, c)), data[:cut])
			want := marksWhole(c, data, marks, cut)
			if !reflect.DeepEqual(cf.Marks, want) || !cf.Truncated {
				t.Errorf("%s cut at %d (mark at %d..%d): marks %v truncated %v, want %v", c, cut, m.Pos, markEnd(c, data, m), cf.Marks, cf.Truncated, want)
			}
			if cut > int(m.Pos) && cut < markEnd(c, data, m) {
				inside++
			}
		}
	}
	if inside < 2*12 {
		t.Errorf("%s: %d cuts inside a mark, want 12 a mark or more", c, inside)
	}
}

// openBytes writes data to path and opens it as a recording, closed when
// the test ends.
func openBytes(t *testing.T, path string, data []byte) *File {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rf, err := OpenFile(path)
	if err != nil {
		t.Fatalf("%s (%d bytes): %v", path, len(data), err)
	}
	t.Cleanup(func() { rf.Close() })
	return rf
}
