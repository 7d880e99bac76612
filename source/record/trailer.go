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

// trailerMarks is the trailer's list of marks: a count, then each mark
// as varint deltas from the one before.
func trailerMarks(out []byte, marks []Mark) []byte {
	out = binary.AppendUvarint(out, uint64(len(marks)))
	var t time.Duration
	var pos int64
	for _, m := range marks {
		out = binary.AppendVarint(out, int64(m.T-t))
		out = binary.AppendUvarint(out, uint64(m.Pos-pos))
		t, pos = m.T, m.Pos
	}
	return out
}

// zstdTrailer is the skippable frame that lists marks.
func zstdTrailer(marks []Mark) []byte {
	out := trailerMarks(make([]byte, 8, 8+16+len(marks)*8), marks)
	n := len(out) // the marks after the 8-byte header, and the footer
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	out = append(out, trailerTag...)
	binary.LittleEndian.PutUint32(out[0:4], trailerMagic)
	binary.LittleEndian.PutUint32(out[4:8], uint32(n))
	return out
}

// The trailer of a .gz recording: the same list of marks (trailerMarks),
// in the extra fields (subfield "vi") of empty gzip members, as many as it
// takes (an extra field holds at most 64 KiB), just before the end member.
// zcat reads them as nothing. The end member, an empty member with the
// comment endComment, says in its own extra field (subfield "ve") how many
// bytes the trailer takes, then the tag:
//
//	1f 8b 08 14 00000000 00 ff  the member's header: FEXTRA and FCOMMENT
//	0c 00 'v' 'e' 08 00         the extra field: 12 bytes, one subfield
//	uint32 trailer length, "vkix"
//	"vkwatch recording end" 00  the comment
//	03 00 00000000 00000000     an empty deflate block, CRC and size 0
//
// Every member of the trailer and the end is written by this package byte
// for byte (not by compress/gzip), so a reader can check it the same way.

// gzip extra subfield ids: a data member's frame mark, a piece of the
// trailer, the end member's footer.
var (
	gzipMarkID    = [2]byte{'v', 'k'}
	gzipTrailerID = [2]byte{'v', 'i'}
	gzipEndID     = [2]byte{'v', 'e'}
)

// gzipSubfield is an extra field holding one subfield.
func gzipSubfield(id [2]byte, data []byte) []byte {
	out := append(make([]byte, 0, 4+len(data)), id[0], id[1])
	out = binary.LittleEndian.AppendUint16(out, uint16(len(data)))
	return append(out, data...)
}

// gzipEmptyMember is an empty gzip member with the extra field extra and,
// when comment is not empty, a comment.
func gzipEmptyMember(extra []byte, comment string) []byte {
	flg := byte(0x04) // FEXTRA
	if comment != "" {
		flg |= 0x10 // FCOMMENT
	}
	out := []byte{0x1f, 0x8b, 8, flg, 0, 0, 0, 0, 0, 0xff}
	out = binary.LittleEndian.AppendUint16(out, uint16(len(extra)))
	out = append(out, extra...)
	if comment != "" {
		out = append(append(out, comment...), 0)
	}
	return append(out, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

// gzipChunk is how much of the trailer one member holds: an extra field
// is at most 65,535 bytes, its subfield header included.
const gzipChunk = 65535 - 4

// gzipTrailer is the empty members that list marks.
func gzipTrailer(marks []Mark) []byte {
	payload := trailerMarks(nil, marks)
	var out []byte
	for len(payload) > 0 {
		n := min(len(payload), gzipChunk)
		out = append(out, gzipEmptyMember(gzipSubfield(gzipTrailerID, payload[:n]), "")...)
		payload = payload[n:]
	}
	return out
}

// gzipEndMember is the member that ends a .gz recording, after a trailer
// of n bytes.
func gzipEndMember(n uint32) []byte {
	foot := binary.LittleEndian.AppendUint32(nil, n)
	return gzipEmptyMember(gzipSubfield(gzipEndID, append(foot, trailerTag...)), endComment)
}

// readTrailer reads the marks of a zstd or gzip recording's trailer: ok
// false when the file has none, or one that does not hold together (then
// the caller walks the frames).
func (rf *File) readTrailer() ([]Mark, bool) {
	// One read of the tail: the end mark, the trailer's length and tag,
	// and the whole trailer of a recording of a day or so.
	tail := min(rf.size, 256<<10)
	buf := make([]byte, tail)
	if _, err := rf.f.ReadAt(buf, rf.size-tail); err != nil {
		return nil, false
	}
	if rf.Comp == Gzip {
		return rf.readGzipTrailer(buf)
	}
	end := zstdEndMark()
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

// readGzipTrailer reads a gzip recording's trailer, the file's last bytes
// in tail.
func (rf *File) readGzipTrailer(tail []byte) ([]Mark, bool) {
	endLen := len(gzipEndMember(0))
	if len(tail) < endLen {
		return nil, false
	}
	// The trailer's length is 16 bytes into the end member: the member's
	// header, the extra field's length and the subfield's header.
	endAt := rf.size - int64(endLen)
	end := tail[len(tail)-endLen:]
	n := binary.LittleEndian.Uint32(end[16:])
	start := endAt - int64(n)
	if !bytes.Equal(end, gzipEndMember(n)) || n == 0 || n > trailerMax || start < 0 {
		return nil, false
	}
	var members []byte
	if off := start - (rf.size - int64(len(tail))); off >= 0 {
		members = tail[off : len(tail)-endLen]
	} else { // a long recording's trailer: a second read
		members = make([]byte, n)
		if _, err := rf.f.ReadAt(members, start); err != nil {
			return nil, false
		}
	}
	// The members, each checked byte for byte against what the writer
	// writes for its piece of the trailer.
	var payload []byte
	for len(members) > 0 {
		if len(members) < 16 {
			return nil, false
		}
		k := int(binary.LittleEndian.Uint16(members[14:])) // the piece's length
		if k > gzipChunk || len(members) < 16+k {
			return nil, false
		}
		piece := members[16 : 16+k]
		m := gzipEmptyMember(gzipSubfield(gzipTrailerID, piece), "")
		if !bytes.HasPrefix(members, m) {
			return nil, false
		}
		payload = append(payload, piece...)
		members = members[len(m):]
	}
	return parseTrailer(payload, start)
}
