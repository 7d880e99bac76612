package record

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	json "github.com/go-json-experiment/json"
	"io"
	"os"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// A recording may be compressed, chosen by its file name (CompressionFor):
// NAME.zst is zstd, NAME.gz gzip, anything else plain; a reader tells it by
// the first bytes. FORMAT.md specifies the flushing, the zstd frames, their
// marks and the index that ends a whole .zst recording.

// Compression is how a recording's bytes are stored.
type Compression int

const (
	Plain Compression = iota
	Zstd
	Gzip
)

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

// zstdLevel is the writer's zstd level.
const zstdLevel = zstd.SpeedBetterCompression

// The zstd skippable frame magics of this format (0x184D2A50 to
// 0x184D2A5F are skippable; zstd tools skip them): a frame's mark, and the
// index that ends a whole recording.
const (
	markMagic  = 0x184D2A5B
	indexMagic = 0x184D2A5D
)

// indexTag ends the index frame, after the length of its JSON.
var indexTag = []byte("vkix")

// Mark is a position a Scanner can start reading events at: T is the
// offset of the first event there. A mark frame holds its T; the index
// lists every mark with its position.
type Mark struct {
	T   time.Duration `json:"t_ns,format:nano"`
	Pos int64         `json:"pos,omitzero"`
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
		return gzipStream{gzip.NewWriter(w)}, nil
	}
	return nil, nil
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

type zstdStream struct {
	w     *countingWriter
	enc   *zstd.Encoder
	begun bool
	marks []Mark // every mark written: the index
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
	mark, _ := json.Marshal(Mark{T: t})
	z.marks = append(z.marks, Mark{T: t, Pos: z.w.n})
	if _, err := z.w.Write(skippable(markMagic, mark)); err != nil {
		return err
	}
	z.enc.Reset(z.w)
	z.begun = true
	return nil
}

// Close ends the last frame and writes the index.
func (z *zstdStream) Close() error {
	if z.begun {
		if err := z.enc.Close(); err != nil {
			return err
		}
	}
	idx, err := json.Marshal(indexJSON{Marks: z.marks}, jsonOpts)
	if err != nil {
		return err
	}
	idx = binary.LittleEndian.AppendUint32(idx, uint32(len(idx)))
	_, err = z.w.Write(skippable(indexMagic, append(idx, indexTag...)))
	return err
}

// indexJSON is the index frame's JSON.
type indexJSON struct {
	Marks []Mark `json:"marks"`
}

// skippable is a zstd skippable frame of magic holding payload.
func skippable(magic uint32, payload []byte) []byte {
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, 8+len(payload)), magic)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
	return append(out, payload...)
}

// gzipStream is one gzip stream: a flush is a deflate sync flush, and it
// has no frames to seek by.
type gzipStream struct{ *gzip.Writer }

func (gzipStream) newFrame(time.Duration) error { return nil }

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
	done func()
	// ended, asked at the end of r, says whether the recording is whole:
	// a zstd recording's index was read last. Always true for plain and
	// gzip, whose ends the reading itself checks.
	ended func() bool
}

// decompress returns r's content, decompressed as its first bytes say. A
// stream cut short inside a frame ends with errCutShort after every whole
// block before the cut.
func decompress(r io.Reader) (decompressed, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	head, _ := br.Peek(4)
	c := sniff(head)
	whole := func() bool { return true }
	switch c {
	case Zstd:
		// The decoder skips skippable frames, so the index is looked for
		// in the last bytes it read: with one goroutine it reads its input
		// in order and to the end before it says EOF.
		tail := &tailKeeper{r: br}
		dec, err := zstd.NewReader(tail, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return decompressed{}, err
		}
		return decompressed{cutShort{dec}, dec.Close, tail.endsWith(indexTag)}, nil
	case Gzip:
		gz, err := gzip.NewReader(br)
		if err != nil {
			return decompressed{}, fmt.Errorf("gzip: %w", err)
		}
		return decompressed{cutShort{gz}, func() { gz.Close() }, whole}, nil
	}
	return decompressed{br, func() {}, whole}, nil
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
