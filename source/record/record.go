// Package record writes what vkwatch sees to a file while it watches, and
// reads such a file back for replay.
//
// A recording is JSON Lines: a header line, then one whole event per line,
// each written and read by encoding/json from the tags of source's types.
// A sample holds what was measured; what is derived from it (the
// instruments, a save's progress, the save_started events) is derived
// again when it is read, by the very function the watcher used live
// (saves.Tracker.Observe). The format is specified in FORMAT.md beside
// this file. A CSV flavour writes one row per sample for spreadsheets;
// only JSON Lines are read back.
//
// Recordings never hold a password: addresses are display forms, settings
// that name a secret are dropped and commands that carry one are masked.
package record

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"io"
	"sync"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// jsonOpts are how recordings are written, with encoding/json/v2
// (github.com/go-json-experiment/json: about four times as fast as
// encoding/json for a sample, with the same bytes): a server's string that
// is not UTF-8 is written with U+FFFD for its bad bytes, and maps (the
// header's settings) in key order. Reading takes the defaults: invalid
// UTF-8 or a key twice in an object is an error.
var jsonOpts = json.JoinOptions(jsontext.AllowInvalidUTF8(true), json.Deterministic(true))

// FormatName is Header.Format of every recording.
const FormatName = "vkwatch-recording"

// Version is the recording format version this package writes and the only
// one it reads (FORMAT.md: versions 1 to 7, before 1.0, were another
// encoding of the same events).
const Version = 8

// Header is the first line of every recording.
type Header struct {
	Format  string    `json:"format"`  // FormatName
	Version int       `json:"version"` // format version
	VKWatch string    `json:"vkwatch,omitzero"`
	Epoch   time.Time `json:"epoch"` // the run Clock's epoch: wall clock, read once
	// Settings are the run's settings (interval, ping interval, writers...).
	// Keys that name a secret are dropped when written.
	Settings map[string]string `json:"settings,omitzero"`
	// Servers are the servers watched from the start, in the order given.
	Servers []ServerInfo `json:"servers,omitzero"`
}

// ServerInfo describes one watched server.
type ServerInfo struct {
	Node     source.NodeID    `json:"node"` // what its events are keyed by
	Addr     string           `json:"addr,omitzero"`
	Identity *source.Identity `json:"identity,omitzero"`
}

// flushEvery bounds how much a crash can lose.
const flushEvery = time.Second

// Format is how a Writer writes events: JSONL, which this package reads
// back, or CSV, one row per event for spreadsheets. The zero value is
// JSONL. Its names are jsonl and csv; MarshalText and UnmarshalText make it
// a flag's value, parsed once where it is typed (flag.TextVar).
type Format uint8

const (
	JSONL Format = iota
	CSV
)

func (f Format) String() string {
	if f == CSV {
		return "csv"
	}
	return "jsonl"
}

func (f Format) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

func (f *Format) UnmarshalText(b []byte) error {
	switch string(b) {
	case "jsonl":
		*f = JSONL
	case "csv":
		*f = CSV
	default:
		return fmt.Errorf("unknown recording format %q (use jsonl or csv)", b)
	}
	return nil
}

// Options are how a Writer writes; the zero value writes plain JSONL.
type Options struct {
	Format      Format
	Compression Compression // see CompressionFor
	// FrameEvery is how much recording time one zstd frame holds: the
	// granularity of a seek (10 s when zero). Longer frames compress
	// better; ten seconds keeps a seek to decoding at most ten seconds of
	// events before the one asked for.
	FrameEvery time.Duration
}

// Writer writes a recording. Its methods are safe for concurrent use.
type Writer struct {
	mu         sync.Mutex
	bw         *bufio.Writer
	comp       compressor // nil for a plain recording
	format     Format
	frameEvery time.Duration
	frameT     time.Duration
	epoch      time.Time
	lastFlush  time.Time
	err        error // first write error; sticky
	closed     bool
	stop       chan struct{}
	done       chan struct{}
}

// NewWriter writes the header of a recording to w and returns a Writer for
// its events, written as o says. The Writer flushes at least once a
// second, so a crash loses at most about a second of events; Close flushes
// the rest. Closing w stays the caller's job.
//
// Format and Version in h are filled in by NewWriter.
func NewWriter(w io.Writer, h Header, o Options) (*Writer, error) {
	comp, err := newCompressor(o.Compression, w)
	if err != nil {
		return nil, err
	}
	rw := &Writer{
		bw:         bufio.NewWriterSize(w, 64*1024),
		comp:       comp,
		format:     o.Format,
		frameEvery: cmp.Or(o.FrameEvery, 10*time.Second),
		epoch:      h.Epoch,
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	if comp != nil {
		rw.bw = bufio.NewWriterSize(comp, 64*1024)
	}
	line, err := json.Marshal(cleanHeader(h), jsonOpts)
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	if o.Format == CSV {
		// The header rides along as a comment line, which spreadsheet and
		// dataframe readers can be told to skip (pandas: comment='#').
		rw.bw.WriteString("# ")
	}
	rw.bw.Write(inert.JSON(line))
	rw.bw.WriteByte('\n')
	if o.Format == CSV {
		rw.bw.Write(csvLine(csvColumns))
		rw.bw.WriteByte('\n')
	}
	if err := rw.flushOut(); err != nil {
		return nil, fmt.Errorf("write recording header: %w", err)
	}
	rw.lastFlush = time.Now()
	go rw.flusher()
	return rw, nil
}

// flusher flushes once a second so that a quiet stretch of events, or a
// crash after one, leaves the file at most a second behind.
func (rw *Writer) flusher() {
	defer close(rw.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-rw.stop:
			return
		case <-t.C:
			rw.mu.Lock()
			if !rw.closed && time.Since(rw.lastFlush) >= flushEvery/2 {
				rw.flushLocked()
			}
			rw.mu.Unlock()
		}
	}
}

func (rw *Writer) flushLocked() {
	if err := rw.flushOut(); err != nil && rw.err == nil {
		rw.err = err
	}
	rw.lastFlush = time.Now()
}

// flushOut writes what is buffered through to the underlying writer: for a
// compressed recording, to the end of a compressed block.
func (rw *Writer) flushOut() error {
	if err := rw.bw.Flush(); err != nil {
		return err
	}
	if rw.comp != nil {
		return rw.comp.Flush()
	}
	return nil
}

// startFrame begins a new compressed frame at the event at offset t when
// the current one holds frameEvery of recording: a reader can start
// decoding at any frame start.
func (rw *Writer) startFrame(t time.Duration) {
	if rw.comp == nil || t-rw.frameT < rw.frameEvery || rw.err != nil {
		return
	}
	if err := rw.bw.Flush(); err != nil {
		rw.err = err
		return
	}
	if err := rw.comp.newFrame(t); err != nil {
		rw.err = err
	}
	rw.frameT = t
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("recording already closed")

// Write records one event. An event that is derived when read (a
// save_started: its sample is the sample event's twin) is not written to
// JSON Lines; CSV, which is not read back, has a row for it.
// After a write error every later Write returns that error: a recording
// with a hole in the middle would mislead.
func (rw *Writer) Write(ev source.Event) error {
	if ev.Kind == source.EventSaveStarted && rw.format != CSV {
		return nil
	}
	line, err := rw.encode(clean(ev))
	if err != nil {
		// The event's own fault, not the file's: the next one is written.
		return fmt.Errorf("recording a %s event: %w", ev.Kind, err)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return ErrClosed
	}
	rw.startFrame(ev.Offset)
	if rw.err == nil {
		rw.bw.Write(line)
		rw.err = rw.bw.WriteByte('\n')
	}
	if rw.err == nil && time.Since(rw.lastFlush) >= flushEvery {
		rw.flushLocked()
	}
	return rw.err
}

// encode is ev as one line of the recording, without its newline. The C1
// and bidi controls JSON leaves raw are escaped too, so that a recording
// is safe to print.
func (rw *Writer) encode(ev source.Event) ([]byte, error) {
	if rw.format == CSV {
		return csvLine(csvRow(ev, rw.epoch)), nil
	}
	line, err := json.Marshal(ev, jsonOpts)
	return inert.JSON(line), err
}

// Close flushes what is buffered, ends a compressed recording with its
// index (compress.go) and stops the background flushing. It does not close
// the underlying io.Writer. Calling it again returns nil.
func (rw *Writer) Close() error {
	rw.mu.Lock()
	if rw.closed {
		rw.mu.Unlock()
		return nil
	}
	rw.closed = true
	rw.flushLocked()
	if rw.comp != nil {
		if err := rw.comp.Close(); err != nil && rw.err == nil {
			rw.err = err
		}
	}
	err := rw.err
	rw.mu.Unlock()
	close(rw.stop)
	<-rw.done
	return err
}
