// Package record writes what vkwatch sees to a file while it watches, and
// reads such a file back for replay.
//
// A recording is JSON Lines: a header line (format, version, the run clock's
// epoch, settings, servers) and then one line per event. Every timestamp is
// the run clock's monotonic offset ("t", seconds) plus the absolute wall time
// derived from it ("at" = epoch + t): the two can never disagree, which is the
// mistake that cost the seed experiment its per-sample files. A CSV flavour
// writes one row per sample for spreadsheets; only JSONL is read back.
//
// Recordings never hold a password: addresses are display forms, settings
// that name a secret are dropped and commands that carry one are masked.
package record

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/vkwatch/vkwatch/source"
)

// FormatName is the Format of every recording's header.
const FormatName = "vkwatch-recording"

// Version is the recording format version this package writes. Read also
// accepts every older version.
//
//   - 1: events name their server by position ("server": 0 or 1), an index
//     into the header's servers.
//   - 2: events name it by node id ("node"), and each header server has
//     its node id; servers may be added while recording (a fleet).
//   - 3: a sample may be a "delta": only the fields that changed since
//     that node's previous sample (see delta.go), with a full "sample" at
//     least every 5 s per node.
//   - 4: a compressed recording ends with an end mark (see compress.go), so
//     one cut between two frames reads as cut short. The lines are those of
//     version 3.
//   - 5: a delta sample leaves out cow, cow_from, footprint and
//     footprint_from when they are what the sample's INFO and /proc figures
//     give by the watcher's rule (source.Derive; see delta.go).
//   - 6: a delta sample also leaves out ping10s.in_flight_us when it is
//     ping.in_flight_us, and save.elapsed_s when it is the sample's offset
//     less save.started_s (see delta.go).
//   - 7: and save.eta_s when it is the server's forkless estimate or the
//     previous sample's counted down (see delta.go).
const Version = 7

// Header is the first line of every recording.
type Header struct {
	Format  string    // FormatName
	Version int       // format version
	VKWatch string    // version of vkwatch that wrote it
	Epoch   time.Time // the run Clock's epoch: wall clock, read once
	// Settings are the run's settings (interval, ping interval, writers...).
	// Keys that name a secret are dropped when written.
	Settings map[string]string
	// Servers are the servers watched from the start, in the order given.
	Servers []ServerInfo
}

// ServerInfo describes one watched server.
type ServerInfo struct {
	Node     source.NodeID    // what its events are keyed by
	Addr     string           // display address, never with a password
	Identity *source.Identity // what the server said about itself, when known
}

// flushEvery bounds how much a crash can lose.
var flushEvery = time.Second

// Writer writes a recording. Its methods are safe for concurrent use.
type Writer struct {
	mu        sync.Mutex
	bw        *bufio.Writer
	csv       *csv.Writer // nil for JSONL
	comp      compressor  // nil for a plain recording
	nodes     map[source.NodeID]*deltaState
	enc       encoder    // the line being written, its buffer kept between lines
	scratch   sampleCopy // a sample of no node being written, as recorded
	opsStep   float64    // of ops/s, by the header's interval (opsStepFor)
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
	comp, err := newCompressor(c, w)
	if err != nil {
		return nil, err
	}
	rw := &Writer{
		bw:      bufio.NewWriterSize(w, 64*1024),
		comp:    comp,
		epoch:   h.Epoch,
		opsStep: opsStepFor(h.Settings["interval"]),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if comp != nil {
		rw.bw = bufio.NewWriterSize(comp, 64*1024)
	}
	h = cleanHeader(h)
	line := encodeHeader(h)
	switch format {
	case "", "jsonl", "json":
		rw.bw.Write(line)
		rw.bw.WriteByte('\n')
	case "csv":
		// The header rides along as a comment line, which spreadsheet and
		// dataframe readers can be told to skip (pandas: comment='#').
		rw.bw.WriteString("# ")
		rw.bw.Write(line)
		rw.bw.WriteByte('\n')
		rw.csv = csv.NewWriter(rw.bw)
		rw.csv.Write(csvColumns)
		rw.csv.Flush()
	default:
		return nil, fmt.Errorf("unknown recording format %q (use jsonl or csv)", format)
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

// Write records one event. After a write error every later Write returns
// that error: a recording with a hole in the middle would mislead.
func (rw *Writer) Write(ev source.Event) error {
	ev = clean(ev)
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.closed {
		return ErrClosed
	}
	var line []byte
	if rw.csv == nil {
		// Under the lock: a delta is against the line written before it.
		// line is rw.enc's buffer, good until the next encode.
		line = rw.encode(ev)
	}
	rw.startFrame(ev.Offset)
	if rw.err != nil {
		return rw.err
	}
	if rw.csv != nil {
		if err := rw.csv.Write(csvRow(ev, rw.epoch)); err != nil {
			rw.err = err
			return err
		}
	} else {
		rw.bw.Write(line)
		if err := rw.bw.WriteByte('\n'); err != nil {
			rw.err = err
			return err
		}
	}
	if time.Since(rw.lastFlush) >= flushEvery {
		rw.flushLocked()
	}
	return rw.err
}

// encode writes ev's line: a sample as a delta against its node's
// previous one where it may be, else whole. The line is in rw.enc's
// buffer; the sample at the recorded precision is in its node's spare
// copy (or rw.scratch): a sample costs the writer no allocation of its own.
func (rw *Writer) encode(ev source.Event) []byte {
	e := &rw.enc
	e.reset()
	ev.Offset = ev.Offset.Round(offsetStep)
	if ev.Sample == nil || ev.Node == "" {
		if ev.Sample != nil {
			ev.Sample = rw.scratch.set(ev.Sample, rw.opsStep)
		}
		e.event(ev, rw.epoch)
		return e.buf.Bytes()
	}
	st := rw.node(ev.Node)
	live := ev.Sample
	ev.Sample = st.next.set(live, rw.opsStep)
	if useDelta(st, ev) {
		prev := &st.prev.s
		if live.Save != nil {
			fitETA(prev, ev.Sample, live.Save.ETA)
		}
		e.delta(ev, deltaBase(prev, ev.Sample), rw.epoch)
	} else {
		e.event(ev, rw.epoch)
		if ev.Kind != source.EventSample {
			// A save_started event's sample is the sample event's twin:
			// the delta chain goes on from the sample events alone.
			return e.buf.Bytes()
		}
		st.lastFull = ev.Offset
	}
	// This sample is the next one's previous; the previous one's copy is
	// the next one's to fill.
	st.prev, st.next = st.next, st.prev
	st.begun = true
	return e.buf.Bytes()
}

// node is the delta state of node n.
func (rw *Writer) node(n source.NodeID) *deltaState {
	st := rw.nodes[n]
	if st == nil {
		if rw.nodes == nil {
			rw.nodes = map[source.NodeID]*deltaState{}
		}
		st = &deltaState{}
		st.prev, st.next = &st.copies[0], &st.copies[1]
		rw.nodes[n] = st
	}
	return st
}

// sampleCopy is a sample as recorded, with a save progress of its own.
type sampleCopy struct {
	s    source.Sample
	save source.SaveProgress // what s.Save points to, when not nil
}

// set makes c s at the precision a recording keeps (recordedSample) and
// returns it. The save progress is copied too, without the tracker's
// curve, which a recording does not keep: the watcher's tracker may fill
// it in later.
func (c *sampleCopy) set(s *source.Sample, opsStep float64) *source.Sample {
	c.s = *s
	roundSample(&c.s, opsStep)
	if s.Save != nil {
		c.save = s.Save.WithoutCurve()
		roundSave(&c.save, s.Offset)
		c.s.Save = &c.save
	}
	return &c.s
}

// Close flushes what is buffered and stops the background flushing. It does
// not close the underlying io.Writer. Calling it again returns nil.
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

// encodeHeader writes the header line (without newline).
func encodeHeader(h Header) []byte {
	var e encoder
	e.open()
	e.key("format")
	e.str(h.Format)
	e.key("version")
	e.value(reflect.ValueOf(h.Version), 0)
	e.key("vkwatch")
	e.str(h.VKWatch)
	e.key("epoch")
	e.value(reflect.ValueOf(h.Epoch), 0)
	e.key("settings")
	e.open()
	keys := make([]string, 0, len(h.Settings))
	for k := range h.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.key(k)
		e.str(h.Settings[k])
	}
	e.close()
	e.key("servers")
	e.buf.WriteByte('[')
	for i, s := range h.Servers {
		if i > 0 {
			e.buf.WriteByte(',')
		}
		e.open()
		e.key("node")
		e.str(string(s.Node))
		e.key("addr")
		e.str(s.Addr)
		e.key("identity")
		e.value(reflect.ValueOf(s.Identity), 0)
		e.close()
	}
	e.buf.WriteByte(']')
	e.close()
	return e.buf.Bytes()
}

// encodeEvent writes one event line (without newline). A sample's own
// offset and wall time are left out when they are the event's, which they
// normally are; the reader puts them back.
func encodeEvent(ev source.Event, epoch time.Time) []byte {
	var e encoder
	e.event(ev, epoch)
	return e.buf.Bytes()
}

// skipOffsetAt leaves a whole sample's offset_s and at out of its line.
var skipOffsetAt = fieldSetOf(sampleType, "offset_s", "at")

// event writes one event line (without newline), as encodeEvent.
func (e *encoder) event(ev source.Event, epoch time.Time) {
	at := epoch.Add(ev.Offset)
	e.open()
	e.key("t")
	e.decimal(int64(ev.Offset), 9)
	e.key("at")
	e.time(at)
	e.key("node")
	e.str(string(ev.Node))
	e.key("kind")
	e.str(ev.Kind.String())
	if ev.Sample != nil {
		e.key("sample")
		e.open()
		var skip fieldSet
		if ev.Sample.Offset == ev.Offset && ev.Sample.At.Equal(at) {
			skip = skipOffsetAt
		}
		e.structFields(reflect.ValueOf(ev.Sample).Elem(), skip)
		e.close()
	}
	if ev.Identity != nil {
		e.key("identity")
		e.value(reflect.ValueOf(ev.Identity).Elem(), 0)
	}
	if ev.Err != "" {
		e.key("err")
		e.str(ev.Err)
	}
	if ev.Command != nil {
		e.key("command")
		e.value(reflect.ValueOf(ev.Command).Elem(), 0)
	}
	if ev.Report != nil {
		e.key("report")
		e.value(reflect.ValueOf(ev.Report).Elem(), 0)
	}
	if ev.Topology != nil {
		e.key("topology")
		e.value(reflect.ValueOf(ev.Topology).Elem(), 0)
	}
	e.close()
}
