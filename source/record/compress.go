package record

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// A recording may be compressed, chosen by its file name: NAME.zst is
// zstd, NAME.gz is gzip, anything else is plain. Inside is the very JSON
// Lines (or CSV) a plain recording holds, so `zstdcat night.jsonl.zst | jq`
// and `zcat night.jsonl.gz | jq` read it.
//
// Crash safety: the Writer flushes at least once a second. For zstd a flush
// ends a compressed block, which a decoder can read on its own terms up to
// that point; for gzip it is a deflate sync flush. A kill -9 therefore
// loses at most about the last second, and a reader reads a file cut short
// up to its last whole block, then says it was cut short.
//
// Seeking: every frameEvery (of the recording's own clock) the Writer ends
// the compressed frame (a gzip member) and starts a new one, so a reader can
// start decoding at any frame start. For zstd each data frame is preceded
// by a small skippable frame (which zstd and zstdcat ignore) that says the
// offset of the frame's first event: a reader builds its index of time to
// file position by walking frame and block headers, without decompressing.
//
// For gzip each data member's header carries the same mark in an extra
// field, which gzip and zcat ignore: a reader finds the members of a file
// without a trailer by their headers, without decompressing.
//
// The end: Close writes an end mark (a skippable frame of its own magic for
// zstd, an empty last gzip member with the comment endComment), so a file
// cut exactly between two frames still reads as cut short: a stream of
// whole frames is otherwise a valid file. Recordings of format version 3
// and older have no end mark and are read as before. Just before the end
// mark, Close writes a trailer listing every frame mark (trailer.go), so a
// reader finds them without walking the file.

// Compression is how a recording's bytes are stored.
type Compression int

const (
	Plain Compression = iota
	Zstd
	Gzip
)

func (c Compression) String() string {
	switch c {
	case Zstd:
		return "zstd"
	case Gzip:
		return "gzip"
	}
	return "plain"
}

// CompressionFor is the compression a recording named path is written
// with: by its last extension, .zst or .gz.
func CompressionFor(path string) Compression {
	switch {
	case strings.HasSuffix(path, ".zst"):
		return Zstd
	case strings.HasSuffix(path, ".gz"):
		return Gzip
	}
	return Plain
}

// frameEvery is how much recording time one compressed frame holds: the
// granularity of a seek. Longer frames compress better (the history of a
// frame is what zstd and deflate find repeats in); ten seconds keeps a seek
// to decoding at most ten seconds of samples before the one asked for.
var frameEvery = 10 * time.Second

// zstdLevel is the writer's zstd level (a variable for the replay
// benchmark, which makes a day of recording faster at the fastest level:
// the frames read the same). Better, not default: about 6% fewer bytes a
// sample, for CPU the encoder's own savings pay for (README, "The
// writer's CPU").
var zstdLevel = zstd.SpeedBetterCompression

// skippableMagic is the zstd skippable frame magic this package uses for
// its frame marks (0x184D2A50 + 0xB: any of 16 is allowed; one marks ours).
const skippableMagic = 0x184D2A5B

// endMagic is the zstd skippable frame magic of the end mark, and
// endPayload its content: what Close writes last.
const endMagic = 0x184D2A5C

var endPayload = []byte(`{"end":true}`)

// trailerMagic is the zstd skippable frame magic of the trailer: the
// frame marks again, all in one place, written by Close just before the
// end mark so that a reader finds its index in one or two reads from the
// file's end instead of walking every block header (see trailer.go).
const trailerMagic = 0x184D2A5D

// endComment is the comment of the empty gzip member that ends a recording.
const endComment = "vkwatch recording end"

// frameMark is the payload of the skippable frame before each data frame.
type frameMark struct {
	T float64 `json:"t"` // offset of the frame's first event, seconds
}

// compressor is a compressed stream the Writer writes through.
type compressor interface {
	io.Writer
	Flush() error
	// newFrame ends the current frame (if any) and starts a new one, whose
	// first event is at offset t.
	newFrame(t time.Duration) error
	Close() error
}

func newCompressor(c Compression, w io.Writer) (compressor, error) {
	switch c {
	case Zstd:
		// One goroutine: the writer's CPU stays inline with the watcher's,
		// and a flush writes what was written, in order.
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstdLevel))
		if err != nil {
			return nil, err
		}
		return &zstdStream{w: &countingWriter{w: w}, enc: enc}, nil
	case Gzip:
		return &gzipStream{w: &countingWriter{w: w}}, nil
	}
	return nil, nil
}

type zstdStream struct {
	w     *countingWriter
	enc   *zstd.Encoder
	begun bool
	marks []Mark // every frame mark written: the trailer's content
}

// countingWriter counts the bytes written through it: where the next
// frame mark starts.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (z *zstdStream) Write(p []byte) (int, error) {
	if !z.begun {
		if err := z.newFrame(0); err != nil {
			return 0, err
		}
	}
	return z.enc.Write(p)
}

func (z *zstdStream) Flush() error {
	if !z.begun {
		return nil
	}
	return z.enc.Flush()
}

func (z *zstdStream) newFrame(t time.Duration) error {
	if z.begun {
		if err := z.enc.Close(); err != nil {
			return err
		}
	}
	mark, _ := json.Marshal(frameMark{T: t.Seconds()})
	z.marks = append(z.marks, Mark{T: markT(frameMark{T: t.Seconds()}), Pos: z.w.n})
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], skippableMagic)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(mark)))
	if _, err := z.w.Write(append(hdr[:], mark...)); err != nil {
		return err
	}
	z.enc.Reset(z.w)
	z.begun = true
	return nil
}

func (z *zstdStream) Close() error {
	if z.begun {
		if err := z.enc.Close(); err != nil {
			return err
		}
	}
	if _, err := z.w.Write(zstdTrailer(z.marks)); err != nil {
		return err
	}
	_, err := z.w.Write(zstdEndMark())
	return err
}

// zstdEndMark is the skippable frame that ends a zstd recording.
func zstdEndMark() []byte {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], endMagic)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(endPayload)))
	return append(hdr[:], endPayload...)
}

// gzipStream writes a gzip member a frame. Each data member's header
// carries its frame mark, {"t":SECONDS}, in an extra field (subfield "vk":
// gzip tools ignore it), so that a reader of a file without a trailer
// finds the members by their headers; Close lists every mark again in a
// trailer of empty members before the end member (trailer.go).
type gzipStream struct {
	w     *countingWriter
	gz    *gzip.Writer
	marks []Mark
}

func (g *gzipStream) Write(p []byte) (int, error) {
	if g.gz == nil {
		if err := g.newFrame(0); err != nil {
			return 0, err
		}
	}
	return g.gz.Write(p)
}

func (g *gzipStream) Flush() error {
	if g.gz == nil {
		return nil
	}
	return g.gz.Flush()
}

func (g *gzipStream) newFrame(t time.Duration) error {
	if g.gz != nil {
		if err := g.gz.Close(); err != nil {
			return err
		}
		g.gz.Reset(g.w)
	} else {
		g.gz = gzip.NewWriter(g.w)
	}
	mark, _ := json.Marshal(frameMark{T: t.Seconds()})
	g.marks = append(g.marks, Mark{T: markT(frameMark{T: t.Seconds()}), Pos: g.w.n})
	g.gz.Extra = gzipSubfield(gzipMarkID, mark)
	return nil
}

func (g *gzipStream) Close() error {
	if g.gz != nil {
		if err := g.gz.Close(); err != nil {
			return err
		}
	}
	tr := gzipTrailer(g.marks)
	if _, err := g.w.Write(tr); err != nil {
		return err
	}
	_, err := g.w.Write(gzipEndMember(uint32(len(tr))))
	return err
}

// errCutShort is what a decompressor says about a file that ends inside a
// frame: everything before it was read.
var errCutShort = errors.New("compressed recording cut short")

// sniff tells a stream's compression from its first bytes: by content, so
// a renamed file still reads.
func sniff(head []byte) Compression {
	switch {
	case len(head) >= 4 && (binary.LittleEndian.Uint32(head) == 0xFD2FB528 || binary.LittleEndian.Uint32(head)&0xFFFFFFF0 == 0x184D2A50):
		return Zstd
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return Gzip
	}
	return Plain
}

// decompressed is a recording's content, decompressed as its first bytes
// say.
type decompressed struct {
	r    io.Reader
	comp Compression
	done func()
	// ended, asked at the end of r, says whether the writer's end mark was
	// read; always true for a plain stream, which has none.
	ended func() bool
}

// decompress returns r's content, decompressed as its first bytes say. A
// stream cut short inside a frame ends with errCutShort after every whole
// block before the cut.
func decompress(r io.Reader) (decompressed, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	head, _ := br.Peek(4)
	c := sniff(head)
	switch c {
	case Zstd:
		// The decoder skips skippable frames, so the end mark is looked
		// for in the last bytes it read: with one goroutine it reads its
		// input in order and to the end before it says EOF.
		tail := &tailKeeper{r: br}
		dec, err := zstd.NewReader(tail, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return decompressed{}, err
		}
		return decompressed{cutShort{dec}, c, dec.Close, tail.endsWith(zstdEndMark())}, nil
	case Gzip:
		gz, err := gzip.NewReader(br)
		if err != nil {
			return decompressed{}, fmt.Errorf("gzip: %w", err)
		}
		gz.Multistream(false)
		m := &gzipMembers{gz: gz, br: br, last: gz.Header.Comment}
		ended := func() bool { return m.last == endComment }
		return decompressed{cutShort{m}, c, func() { gz.Close() }, ended}, nil
	}
	return decompressed{br, c, func() {}, func() bool { return true }}, nil
}

// gzipMembers reads a gzip stream member by member, keeping the comment of
// the last member begun: gzip.Reader's own multistream mode keeps only the
// first member's header.
type gzipMembers struct {
	gz   *gzip.Reader
	br   *bufio.Reader
	last string
}

func (m *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := m.gz.Read(p)
		if err != io.EOF {
			return n, err
		}
		// The member's end: another begins, or the stream ends here.
		if rerr := m.gz.Reset(m.br); rerr != nil {
			return n, rerr // io.EOF at the stream's end
		}
		m.gz.Multistream(false)
		m.last = m.gz.Header.Comment
		if n > 0 {
			return n, nil
		}
	}
}

// tailKeeper passes reads through and keeps the last bytes read.
type tailKeeper struct {
	r    io.Reader
	tail []byte
}

const tailKept = 32

func (t *tailKeeper) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.tail = append(t.tail, p[:n]...)
	if len(t.tail) > tailKept {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-tailKept:]...)
	}
	return n, err
}

// endsWith returns whether what was read so far ends with mark.
func (t *tailKeeper) endsWith(mark []byte) func() bool {
	return func() bool { return bytes.HasSuffix(t.tail, mark) }
}

// cutShort turns a decompressor's unexpected end into errCutShort.
type cutShort struct{ r io.Reader }

func (c cutShort) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected EOF") {
			err = errCutShort
		} else {
			err = fmt.Errorf("%w: %v", errCutShort, err)
		}
	}
	return n, err
}

// ReadFile reads the recording at path, compressed or not.
func ReadFile(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := Read(f)
	if err != nil {
		return rec, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}
