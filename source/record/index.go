package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/klauspost/compress/zstd"
)

// File is a recording opened for streaming replay: its header, and an
// index of recording time to the file positions a reader can start at, so
// that a seek reads a few seconds of the file, never all of it before.
//
// How the index is built, in one pass on open that reads no more than it
// must:
//   - .zst: the writer puts a skippable frame saying its first event's
//     offset before every data frame (every 10 s of recording), and lists
//     them all again in a trailer at Close (trailer.go): Open reads the
//     trailer, or in a file without one walks frame and block headers to
//     find the marks, without decompressing.
//   - plain JSON Lines: Open marks the first line and one in its last 64 KiB;
//     a seek bisects the file for its place, reading a line at each step.
//   - .gz: the writer ends a gzip member every 10 s of recording, its
//     header carrying the offset of its first event in an extra field, and
//     lists them all again in a trailer of empty members at Close
//     (trailer.go): Open reads the trailer, or in a file without one finds
//     the members by their headers in the compressed bytes (deflate itself
//     cannot be skipped through). A .gz written before the marks has only
//     its start: a seek there reads from the start.
//
// The end of the recording is found by decoding its last frame (or 64 KiB).
type File struct {
	Header Header
	Comp   Compression
	// Marks are where decoding can start, in file order; their T are in
	// about offset order (events are written as they arrive).
	Marks []Mark
	// Start and End are the offsets of the first and the last event.
	Start, End time.Duration
	// Truncated and Why: the recording ends cut short.
	Truncated bool
	Why       string

	path string
	f    *os.File
	size int64
	body int64 // plain: where the first event line starts
}

// Mark is a position a Scanner can start reading events at: T is the
// offset of the first event there.
type Mark struct {
	T   time.Duration
	Pos int64
}

// OpenFile opens the recording at path and indexes it. Close closes it.
func OpenFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	rf := &File{path: path, f: f, size: fi.Size()}
	if err := rf.index(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rf, nil
}

// Close closes the file.
func (rf *File) Close() error { return rf.f.Close() }

func (rf *File) index() error {
	sc, err := NewScanner(io.NewSectionReader(rf.f, 0, rf.size))
	if err != nil {
		return err
	}
	rf.Header = sc.Header()
	first := sc.Next()
	if first {
		rf.Start = sc.Event().Offset
	}
	sc.Close()
	var head [4]byte
	rf.f.ReadAt(head[:], 0)
	rf.Comp = sniff(head[:])
	switch rf.Comp {
	case Zstd:
		err = rf.indexZstd()
	case Gzip:
		rf.indexGzip()
	case Plain:
		err = rf.indexPlain()
	}
	if err != nil {
		return err
	}
	if len(rf.Marks) == 0 {
		rf.Marks = []Mark{{T: rf.Start, Pos: 0}}
	}
	// The end: the latest offset from the last mark on, or, when the last
	// frame holds no whole line (a file cut short just after a frame
	// began), from the mark before it.
	rf.End = rf.Start
	for i := len(rf.Marks) - 1; i >= 0; i-- {
		latest, read, err := rf.scanToEnd(rf.Marks[i], i == len(rf.Marks)-1)
		if err != nil {
			return err
		}
		rf.End = max(rf.End, latest)
		if read {
			break
		}
	}
	return nil
}

// scanToEnd reads from m to the end of the recording, returning the latest
// offset read (orphans too: the last frame may hold only deltas of whole
// samples written in the frame before) and whether any line was; last
// says whether m is the last mark, whose scan says whether the recording
// was cut short.
func (rf *File) scanToEnd(m Mark, last bool) (time.Duration, bool, error) {
	s, err := rf.scanAt(m)
	if err != nil {
		return 0, false, err
	}
	defer s.Close()
	read := false
	for s.Next() {
		read = true
	}
	read = read || s.Orphans() > 0
	if last {
		rf.Truncated, rf.Why = s.Truncated()
	}
	return s.Latest(), read, s.Err()
}

// indexZstd reads the marks of a zstd recording from its trailer, or, in
// a file without one, walks its frames: each skippable frame of ours is a
// mark at its own position (a decoder skips it).
func (rf *File) indexZstd() error {
	if marks, ok := rf.readTrailer(); ok {
		rf.Marks = marks
		return nil
	}
	return rf.walkZstd()
}

// walkZstd walks frame and block headers, without decompressing: a read
// of every block header, so it grows with the recording's length.
func (rf *File) walkZstd() error {
	br := bufio.NewReaderSize(io.NewSectionReader(rf.f, 0, rf.size), 256<<10)
	pos := int64(0)
	skip := func(n int64) error {
		d, err := br.Discard(int(n))
		pos += int64(d)
		return err
	}
	for {
		magic, err := br.Peek(8)
		if len(magic) < 4 {
			return nil // the end, or cut short inside a frame header
		}
		m := binary.LittleEndian.Uint32(magic)
		switch {
		case m&0xFFFFFFF0 == 0x184D2A50:
			if err != nil {
				return nil
			}
			n := int64(binary.LittleEndian.Uint32(magic[4:]))
			if m == skippableMagic && n < 256 {
				start := pos
				skip(8)
				payload, err := br.Peek(int(n))
				if err != nil {
					return nil
				}
				var fm frameMark
				if json.Unmarshal(payload, &fm) == nil {
					rf.Marks = append(rf.Marks, Mark{T: markT(fm), Pos: start})
				}
				if skip(n) != nil {
					return nil
				}
				continue
			}
			if skip(8+n) != nil {
				return nil
			}
		case m == 0xFD2FB528:
			hdr, _ := br.Peek(zstd.HeaderMaxSize)
			var h zstd.Header
			if _, err := h.DecodeAndStrip(hdr); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("zstd frame at %d: %w", pos, err)
			} else if err != nil {
				return nil
			}
			if skip(int64(h.HeaderSize)) != nil {
				return nil
			}
			// Blocks: a 3-byte header (last flag, type, size) each.
			for {
				bh, err := br.Peek(3)
				if err != nil {
					return nil
				}
				v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
				last, typ, size := v&1 == 1, (v>>1)&3, int64(v>>3)
				if typ == 1 { // RLE: one byte stands for size bytes
					size = 1
				}
				if skip(3+size) != nil {
					return nil
				}
				if last {
					break
				}
			}
			if h.HasCheckSum && skip(4) != nil {
				return nil
			}
		default:
			return fmt.Errorf("not a zstd frame at %d", pos)
		}
	}
}

// indexGzip reads the marks of a gzip recording from its trailer, or, in a
// file without one, finds its members by their headers (walkGzip).
func (rf *File) indexGzip() {
	if marks, ok := rf.readTrailer(); ok {
		rf.Marks = marks
		return
	}
	rf.walkGzip()
}

// walkGzip finds the data members of a gzip recording by their headers'
// frame marks: the bytes 1f 8b 08, flags with FEXTRA alone, then at 12
// the subfield "vk" holding {"t":SECONDS}. It reads the whole file, a
// search through each MiB without decompressing, so it grows with the
// recording's length. A mark is believed only as far as a seek goes: one
// that is no member's start makes that seek fail (or read as cut short),
// never read out of bounds.
func (rf *File) walkGzip() {
	const chunk = 1 << 20
	const most = 16 + 255 // a member's header with its mark: the overlap
	buf := make([]byte, chunk+most)
	sig := []byte{0x1f, 0x8b, 8, 0x04}
	for at := int64(0); at < rf.size; at += chunk {
		n, _ := rf.f.ReadAt(buf, at)
		b := buf[:n]
		for i := 0; i < min(n, chunk); {
			j := bytes.Index(b[i:], sig)
			if j < 0 || i+j >= chunk {
				break
			}
			i += j
			if m, ok := gzipMarkAt(b[i:]); ok {
				rf.Marks = append(rf.Marks, Mark{T: m, Pos: at + int64(i)})
			}
			i++
		}
	}
}

// gzipMarkAt reads the frame mark of the data member whose header starts
// b, false when b does not start one.
func gzipMarkAt(b []byte) (time.Duration, bool) {
	if len(b) < 16 || b[12] != gzipMarkID[0] || b[13] != gzipMarkID[1] {
		return 0, false
	}
	xlen, k := int(binary.LittleEndian.Uint16(b[10:])), int(binary.LittleEndian.Uint16(b[14:]))
	if xlen != 4+k || k > 255 || len(b) < 16+k {
		return 0, false
	}
	var fm frameMark
	if json.Unmarshal(b[16:16+k], &fm) != nil {
		return 0, false
	}
	return markT(fm), true
}

// plainMarkEvery is how close a seek in a plain recording gets by
// bisection before it reads on: 64 KiB is about 100 samples, for a probe
// more (a day of six servers takes about 15).
var plainMarkEvery int64 = 64 << 10

// plainSlack is how far before the time asked for a plain recording's
// bisection stops: events are written as they arrive, only about in
// order of their offsets.
const plainSlack = time.Second

// indexPlain marks the first event line, and the first whole line of the
// last plainMarkEvery (where Open reads on to find the end). A seek finds
// its place by bisecting the file (plainMarkBefore): a few reads, however
// long the recording, where marking every MiB on open read a line per MiB
// (1,800 reads for a day of six servers).
func (rf *File) indexPlain() error {
	first, err := bufio.NewReader(io.NewSectionReader(rf.f, 0, rf.size)).ReadBytes('\n')
	if err != nil {
		return nil // a header alone
	}
	rf.body = int64(len(first))
	rf.Marks = append(rf.Marks, Mark{T: rf.Start, Pos: rf.body})
	if at := rf.size - plainMarkEvery; at > rf.body {
		if m, ok := rf.plainProbe(at); ok {
			rf.Marks = append(rf.Marks, m)
		}
	}
	return nil
}

// plainProbe is a mark at the first whole event line after position at.
func (rf *File) plainProbe(at int64) (Mark, bool) {
	buf := make([]byte, 64<<10)
	n, _ := rf.f.ReadAt(buf, at)
	i := bytes.IndexByte(buf[:n], '\n')
	if i < 0 {
		return Mark{}, false
	}
	j := bytes.IndexByte(buf[i+1:n], '\n')
	if j < 0 {
		return Mark{}, false
	}
	t, ok := lineOffset(buf[i+1 : i+1+j])
	return Mark{T: t, Pos: at + int64(i) + 1}, ok
}

// plainMarkBefore bisects a plain recording for a line at least
// plainSlack before t, within plainMarkEvery of the last such line.
func (rf *File) plainMarkBefore(t time.Duration) Mark {
	lo := rf.Marks[0]
	if t-plainSlack <= lo.T {
		return lo
	}
	hi := rf.size
	for hi-lo.Pos > plainMarkEvery {
		mid := lo.Pos + (hi-lo.Pos)/2
		m, ok := rf.plainProbe(mid)
		if ok && m.Pos < hi && m.T <= t-plainSlack {
			lo = m
		} else {
			hi = mid
		}
	}
	return lo
}

// lineOffset reads the "t" of an event line.
func lineOffset(line []byte) (time.Duration, bool) {
	var v struct {
		T json.Number `json:"t"`
	}
	if json.Unmarshal(line, &v) != nil || v.T == "" {
		return 0, false
	}
	n, err := parseDecimal(string(v.T), 9)
	return time.Duration(n), err == nil
}

// MarkBefore is the last mark whose T is at or before t (the first mark
// when none is). Because T are only about in order, it picks the last mark
// in file order from which every later mark is after t.
func (rf *File) MarkBefore(t time.Duration) Mark {
	i := sort.Search(len(rf.Marks), func(i int) bool { return rf.Marks[i].T > t })
	return rf.Marks[max(i-1, 0)]
}

// ScanFrom returns a Scanner of the events from the last mark at or
// before t: it starts at most one frame (10 s) before t, or in a plain
// recording within plainMarkEvery of a second before t.
func (rf *File) ScanFrom(t time.Duration) (*Scanner, error) {
	if rf.Comp == Plain && len(rf.Marks) > 0 {
		return rf.scanAt(rf.plainMarkBefore(t))
	}
	return rf.scanAt(rf.MarkBefore(t))
}

func (rf *File) scanAt(m Mark) (*Scanner, error) {
	if m.Pos == 0 {
		sc, err := NewScanner(io.NewSectionReader(rf.f, 0, rf.size))
		return sc, err
	}
	r := io.NewSectionReader(rf.f, m.Pos, rf.size-m.Pos)
	d := decompressed{r: r, done: func() {}, ended: func() bool { return true }}
	if rf.Comp != Plain {
		var err error
		if d, err = decompress(r); err != nil {
			return nil, err
		}
	}
	return &Scanner{h: rf.Header, br: bufio.NewReaderSize(d.r, 64*1024), done: d.done, ended: d.ended, lineNo: -1}, nil
}
