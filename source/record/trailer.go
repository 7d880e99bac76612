package record

import (
	"bytes"
	"encoding/binary"
	"time"
)

// The trailer of a .zst recording: its frame marks, written by Close in a
// skippable frame of their own (trailerMagic) just before the end mark, so
// that opening a recording of a day reads its index in one or two reads
// from the end rather than walking 86,400 block headers. zstd tools skip
// it like the other marks. A file without one (cut short, still being
// written, or written before the trailer existed) is indexed by the walk,
// as before; so is one whose trailer does not hold together.
//
// The frame's payload, all integers little-endian or varints:
//
//	uvarint  number of marks
//	per mark varint (T - previous T, ns), uvarint (Pos - previous Pos)
//	uint32   payload length, this field and the tag included
//	"vkix"   the tag
//
// so its last 8 bytes, just before the end mark, say where it starts.

var trailerTag = []byte("vkix")

// trailerMax bounds the trailer a reader believes: a day of marks is
// about 50 KB, a year about 20 MB.
const trailerMax = 64 << 20

// markT is the mark time the walk reads from a frame mark's JSON, so that
// the trailer holds the very marks the walk would find.
func markT(fm frameMark) time.Duration { return time.Duration(fm.T * float64(time.Second)) }

// zstdTrailer is the skippable frame that lists marks.
func zstdTrailer(marks []Mark) []byte {
	out := make([]byte, 8, 8+16+len(marks)*8)
	out = binary.AppendUvarint(out, uint64(len(marks)))
	var t time.Duration
	var pos int64
	for _, m := range marks {
		out = binary.AppendVarint(out, int64(m.T-t))
		out = binary.AppendUvarint(out, uint64(m.Pos-pos))
		t, pos = m.T, m.Pos
	}
	n := len(out) // the marks after the 8-byte header, and the footer
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	out = append(out, trailerTag...)
	binary.LittleEndian.PutUint32(out[0:4], trailerMagic)
	binary.LittleEndian.PutUint32(out[4:8], uint32(n))
	return out
}

// readTrailer reads the marks of a zstd recording's trailer: ok false when
// the file has none, or one that does not hold together (then the caller
// walks the frames).
func (rf *File) readTrailer() ([]Mark, bool) {
	end := zstdEndMark()
	// One read of the tail: the end mark, the trailer's length and tag,
	// and the whole trailer of a recording of a day or so.
	tail := min(rf.size, 256<<10)
	buf := make([]byte, tail)
	if _, err := rf.f.ReadAt(buf, rf.size-tail); err != nil {
		return nil, false
	}
	if len(buf) < len(end)+16 || !bytes.Equal(buf[len(buf)-len(end):], end) {
		return nil, false
	}
	foot := buf[len(buf)-len(end)-8 : len(buf)-len(end)]
	if !bytes.Equal(foot[4:], trailerTag) {
		return nil, false
	}
	n := int64(binary.LittleEndian.Uint32(foot))
	start := rf.size - int64(len(end)) - 8 - n // the frame's header
	if n < 9 || n > trailerMax || start < 0 {
		return nil, false
	}
	var frame []byte
	if off := start - (rf.size - tail); off >= 0 {
		frame = buf[off : off+8+n]
	} else { // a long recording's trailer: a second read
		frame = make([]byte, 8+n)
		if _, err := rf.f.ReadAt(frame, start); err != nil {
			return nil, false
		}
	}
	if binary.LittleEndian.Uint32(frame) != trailerMagic || int64(binary.LittleEndian.Uint32(frame[4:])) != n {
		return nil, false
	}
	return parseTrailer(frame[8:8+n-8], start)
}

// parseTrailer decodes a trailer's marks, each of which must be after the
// one before and before the trailer itself (at limit).
func parseTrailer(p []byte, limit int64) ([]Mark, bool) {
	count, k := binary.Uvarint(p)
	if k <= 0 || count > uint64(len(p)) {
		return nil, false
	}
	p = p[k:]
	marks := make([]Mark, 0, count)
	var t time.Duration
	pos := int64(-1)
	for range count {
		dt, k := binary.Varint(p)
		if k <= 0 {
			return nil, false
		}
		p = p[k:]
		dp, k := binary.Uvarint(p)
		if k <= 0 || (dp == 0 && pos >= 0) || dp >= uint64(limit) {
			return nil, false
		}
		p = p[k:]
		if pos < 0 {
			pos = 0
		}
		t, pos = t+time.Duration(dt), pos+int64(dp)
		if pos >= limit {
			return nil, false
		}
		marks = append(marks, Mark{T: t, Pos: pos})
	}
	return marks, len(p) == 0
}
