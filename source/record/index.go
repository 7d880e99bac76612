package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	json "github.com/go-json-experiment/json"
	"io"
	"os"
	"sort"
	"time"

	"github.com/klauspost/compress/zstd"
)

// File is a recording opened for streaming replay: its header, and an
// index of recording time to the file positions a reader can start at, so
// that a seek reads a few seconds of the file, never all of it before: a
// .zst file's marks (its index, or a walk of its frames), a plain file's
// first line (a seek bisects the file), a .gz file's start. The end is
// found by reading on from the last mark.
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

	f    *os.File
	size int64
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
	rf := &File{f: f, size: fi.Size()}
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
	if ev, ok := sc.Next(); ok {
		rf.Start = ev.Offset
	}
	sc.Close()
	var head [4]byte
	rf.f.ReadAt(head[:], 0)
	rf.Comp = sniff(head[:])
	switch rf.Comp {
	case Zstd:
		var ok bool
		if rf.Marks, ok = rf.readIndex(); !ok {
			rf.Marks, err = rf.walkZstd()
		}
	case Plain:
		rf.indexPlain()
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
		s, err := rf.scanAt(rf.Marks[i])
		if err != nil {
			return err
		}
		read := false
		for ev, err := range s.Events() {
			if err != nil {
				s.Close()
				return err
			}
			rf.End, read = max(rf.End, ev.Offset), true
		}
		s.Close()
		if i == len(rf.Marks)-1 {
			rf.Truncated, rf.Why = s.Truncated()
		}
		if read {
			break
		}
	}
	return nil
}

// readIndex reads the marks from the index frame that ends a whole .zst
// recording: false when the file has none, or one that does not hold
// together (the caller walks the frames instead).
func (rf *File) readIndex() ([]Mark, bool) {
	var foot [8]byte // the JSON's length, the tag
	if rf.size < 16 || func() bool { _, err := rf.f.ReadAt(foot[:], rf.size-8); return err != nil }() {
		return nil, false
	}
	n := int64(binary.LittleEndian.Uint32(foot[:]))
	start := rf.size - 16 - n // the frame's header
	if !bytes.Equal(foot[4:], indexTag) || start < 0 || n > MaxLine {
		return nil, false
	}
	frame := make([]byte, 8+n)
	if _, err := rf.f.ReadAt(frame, start); err != nil ||
		binary.LittleEndian.Uint32(frame) != indexMagic || int64(binary.LittleEndian.Uint32(frame[4:])) != n+8 {
		return nil, false
	}
	var idx indexJSON
	if json.Unmarshal(frame[8:], &idx) != nil {
		return nil, false
	}
	for i, m := range idx.Marks {
		if m.Pos < 0 || m.Pos >= start || i > 0 && m.Pos <= idx.Marks[i-1].Pos {
			return nil, false
		}
	}
	return idx.Marks, true
}

// walkZstd finds the marks of a .zst recording by walking its frames and
// blocks by their headers, without decompressing: what a file without its
// index (cut short, still being written) is indexed by. Each mark frame is a
// mark at its own position (a decoder skips it). A file cut short inside a
// frame ends the walk there.
func (rf *File) walkZstd() ([]Mark, error) {
	var marks []Mark
	br := bufio.NewReaderSize(io.NewSectionReader(rf.f, 0, rf.size), 64<<10)
	pos := int64(0)
	skip := func(n int64) bool {
		d, err := br.Discard(int(n))
		pos += int64(d)
		return err == nil
	}
	for {
		head, err := br.Peek(8)
		if err != nil {
			return marks, nil // the end, or cut short inside a frame header
		}
		magic, n := binary.LittleEndian.Uint32(head), int64(binary.LittleEndian.Uint32(head[4:]))
		switch {
		case magic == markMagic && n < 256:
			at := pos
			payload, err := br.Peek(8 + int(n))
			var m Mark
			if err != nil || json.Unmarshal(payload[8:], &m) != nil {
				return marks, nil
			}
			marks = append(marks, Mark{T: m.T, Pos: at})
			skip(8 + n)
		case magic&0xFFFFFFF0 == 0x184D2A50:
			if !skip(8 + n) {
				return marks, nil
			}
		case magic == 0xFD2FB528:
			ok, err := skipZstdFrame(br, &pos, skip)
			if err != nil || !ok {
				return marks, err
			}
		default:
			return marks, fmt.Errorf("not a zstd frame at byte %d", pos)
		}
	}
}

// skipZstdFrame skips the zstd frame at the reader's position, block by
// block (a 3-byte header each: last flag, type, size); false when the file
// ends inside it.
func skipZstdFrame(br *bufio.Reader, pos *int64, skip func(int64) bool) (bool, error) {
	hdr, _ := br.Peek(zstd.HeaderMaxSize)
	var h zstd.Header
	if err := h.Decode(hdr); err != nil {
		if len(hdr) < zstd.HeaderMaxSize {
			return false, nil // cut short inside the header
		}
		return false, fmt.Errorf("zstd frame at byte %d: %w", *pos, err)
	}
	if !skip(int64(h.HeaderSize)) {
		return false, nil
	}
	for {
		bh, err := br.Peek(3)
		if err != nil {
			return false, nil
		}
		v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		last, typ, size := v&1 == 1, (v>>1)&3, int64(v>>3)
		if typ == 1 { // RLE: one byte stands for size bytes
			size = 1
		}
		if !skip(3 + size) {
			return false, nil
		}
		if last {
			break
		}
	}
	return !h.HasCheckSum || skip(4), nil
}

// plainMarkEvery is how close a seek in a plain recording gets by
// bisection before it reads on: 64 KiB is about 30 samples.
const plainMarkEvery = 64 << 10

// plainSlack is how far before the time asked for a plain recording's
// bisection stops: events are written as they arrive, only about in
// order of their offsets.
const plainSlack = time.Second

// indexPlain marks the first event line, and the first whole line of the
// last plainMarkEvery (where Open reads on to find the end). A seek finds
// its place by bisecting the file (plainMarkBefore).
func (rf *File) indexPlain() {
	first, err := bufio.NewReader(io.NewSectionReader(rf.f, 0, rf.size)).ReadSlice('\n')
	if err != nil {
		return // a header alone, or one longer than the buffer: read from the start
	}
	rf.Marks = append(rf.Marks, Mark{T: rf.Start, Pos: int64(len(first))})
	if at := rf.size - plainMarkEvery; at > int64(len(first)) {
		if m, ok := rf.plainProbe(at); ok {
			rf.Marks = append(rf.Marks, m)
		}
	}
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
	var v struct {
		T *time.Duration `json:"t_ns,format:nano"`
	}
	if json.Unmarshal(buf[i+1:i+1+j], &v) != nil || v.T == nil {
		return Mark{}, false
	}
	return Mark{T: *v.T, Pos: at + int64(i) + 1}, true
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

// MarkBefore is the last mark whose T is at or before t (the first mark
// when none is).
func (rf *File) MarkBefore(t time.Duration) Mark {
	i := sort.Search(len(rf.Marks), func(i int) bool { return rf.Marks[i].T > t })
	return rf.Marks[max(i-1, 0)]
}

// ScanFrom returns a Scanner of the events from the last mark at or
// before t: it starts at most one frame (10 s) before t, or in a plain
// recording within plainMarkEvery of a second before t. Its save trackers
// start there, as a watcher connected at that moment would.
func (rf *File) ScanFrom(t time.Duration) (*Scanner, error) {
	if rf.Comp == Plain && len(rf.Marks) > 0 {
		return rf.scanAt(rf.plainMarkBefore(t))
	}
	return rf.scanAt(rf.MarkBefore(t))
}

func (rf *File) scanAt(m Mark) (*Scanner, error) {
	if m.Pos == 0 {
		return NewScanner(io.NewSectionReader(rf.f, 0, rf.size))
	}
	// A mark is the start of a line or of a frame: its first bytes say
	// which.
	d, err := decompress(io.NewSectionReader(rf.f, m.Pos, rf.size-m.Pos))
	if err != nil {
		return nil, err
	}
	return newScanner(rf.Header, d, -1), nil
}
