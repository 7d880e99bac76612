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
	"encoding/csv"
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

// FormatName is the Format of every recording's header.
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
var flushEvery = time.Second

// Writer writes a recording. Its methods are safe for concurrent use.
type Writer struct {
	mu        sync.Mutex
	bw        *bufio.Writer
	csv       *csv.Writer // nil for JSONL
	comp      compressor  // nil for a plain recording
	frameT    time.Duration
	epoch     time.Time
	lastFlush time.Time
	err       error // first write error; sticky
	closed    bool
	stop      chan struct{}
	done      chan struct{}
}

// NewWriter writes the header of a recording to w and returns a Writer for
// its events. format is "jsonl" (also "" or "json") or "csv". The Writer
// flushes at least once a second, so a crash loses at most about a second
// of events; Close flushes the rest. Closing w stays the caller's job.
//
// Format and Version in h are filled in by NewWriter.
func NewWriter(w io.Writer, format string, h Header) (*Writer, error) {
	return NewCompressedWriter(w, format, Plain, h)
}

// NewCompressedWriter is NewWriter writing through compression c (see
// compress.go for how it flushes and where its frames start).
func NewCompressedWriter(w io.Writer, format string, c Compression, h Header) (*Writer, error) {
	switch format {
	case "", "jsonl", "json", "csv":
	default:
		return nil, fmt.Errorf("unknown recording format %q (use jsonl or csv)", format)
	}
	comp, err := newCompressor(c, w)
	if err != nil {
		return nil, err
	}
	rw := &Writer{
		bw:    bufio.NewWriterSize(w, 64*1024),
		comp:  comp,
		epoch: h.Epoch,
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if comp != nil {
		rw.bw = bufio.NewWriterSize(comp, 64*1024)
	}
	line, err := json.Marshal(cleanHeader(h), jsonOpts)
	if err != nil {
		return nil, fmt.Errorf("recording header: %w", err)
	}
	if format == "csv" {
		// The header rides along as a comment line, which spreadsheet and
		// dataframe readers can be told to skip (pandas: comment='#').
		rw.bw.WriteString("# ")
	}
	rw.bw.Write(inert.JSON(line))
	rw.bw.WriteByte('\n')
	if format == "csv" {
		rw.csv = csv.NewWriter(rw.bw)
		rw.csv.Write(csvColumns)
		rw.csv.Flush()
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
	if rw.csv != nil {
		rw.csv.Flush()
		if err := rw.csv.Error(); err != nil && rw.err == nil {
			rw.err = err
		}
	}
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
	if rw.comp == nil || t-rw.frameT < frameEvery || rw.err != nil {
		return
	}
	if rw.csv != nil {
		rw.csv.Flush()
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
	if ev.Kind == source.EventSaveStarted && rw.csv == nil {
		return nil
	}
	ev = clean(ev)
	var line []byte
	if rw.csv == nil {
		var err error
		if line, err = json.Marshal(ev, jsonOpts); err != nil {
			// The event's own fault, not the file's: the next one is
			// written.
			return fmt.Errorf("recording a %s event: %w", ev.Kind, err)
		}
		// The C1 and bidi controls JSON leaves raw are escaped too, so
		// that a recording is safe to print.
		line = inert.JSON(line)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return ErrClosed
	}
	rw.startFrame(ev.Offset)
	if rw.err != nil {
		return rw.err
	}
	if rw.csv != nil {
		if err := rw.csv.Write(csvRow(ev, rw.epoch)); err != nil {
			rw.err = err
		}
	} else {
		rw.bw.Write(line)
		if err := rw.bw.WriteByte('\n'); err != nil {
			rw.err = err
		}
	}
	if rw.err == nil && time.Since(rw.lastFlush) >= flushEvery {
		rw.flushLocked()
	}
	return rw.err
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
