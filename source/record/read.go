package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	json "github.com/go-json-experiment/json"
	"io"
	"iter"
	"strconv"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/saves"
)

// Recording is a recording read back.
type Recording struct {
	Header Header
	Events []source.Event
	// Truncated is set when the last line was cut short or unreadable (the
	// writer crashed mid-line, or a compressed file ends inside a frame);
	// Events holds everything before it.
	Truncated bool
	// Why says how it was cut short, for the note a reader shows.
	Why string
	// Derived are the reports the reader's save trackers derived again
	// from the samples and commands (Scanner): those of the save_ended
	// events, when the recording holds each save whole.
	Derived []source.SaveReport
}

// ErrNotRecording is wrapped by Read's error when the input is not a
// vkwatch recording at all.
var ErrNotRecording = errors.New("not a vkwatch recording")

// MaxLine bounds a line a reader takes: a sample line is about 2 KB; the
// longest a writer writes is a report with its cost curve, a point a sample
// (about 100 bytes): 18,000 points for an hour's save sampled every 200 ms.
// A longer line is an error (with its number), never a reason to hold a
// file in memory.
const MaxLine = 64 << 20

// Read parses a JSONL recording up to its last whole line. A line cut short
// at the end sets Truncated; a bad line before the end is an error, as is
// input that is not a recording or was written by another format version.
//
// A compressed recording (zstd or gzip, told by its first bytes) is read
// through its decompressor; one cut short inside a frame reads up to its
// last whole block and sets Truncated. Read holds every event: a long
// recording is better streamed with a Scanner.
func Read(r io.Reader) (*Recording, error) {
	sc, err := NewScanner(r)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	sc.keep = true
	rec := &Recording{Header: sc.Header()}
	for ev, err := range sc.Events() {
		if err != nil {
			return rec, err
		}
		rec.Events = append(rec.Events, ev)
	}
	rec.Truncated, rec.Why = sc.Truncated()
	rec.Derived = sc.derived
	return rec, nil
}

// Scanner reads a recording one event at a time, so that a recording of a
// night never has to fit in memory. It derives what a recording does not
// hold as the watcher did live: every sample goes through its server's
// saves.Tracker (with the answers to vkwatch's commands, in the recorded
// order), which fills in the sample's instruments and save progress, and a
// save_started event follows the sample that first showed a save. Reports
// are the recorded save_ended events, the live run's own.
type Scanner struct {
	h      Header
	br     *bufio.Reader
	done   func()
	ended  func() bool   // whether the recording's end was read (see decompress)
	next   *source.Event // a derived save_started, due after the sample
	err    error
	why    string // set when the recording was cut short
	lineNo int    // of the line read last; negative from a mark (unknown)
	end    bool
	// maxLine bounds a line: MaxLine, smaller in a test.
	maxLine int
	tr      map[source.NodeID]*saves.Tracker
	// derived are the trackers' reports, kept for Read (keep).
	derived []source.SaveReport
	keep    bool
}

// NewScanner reads the header of the recording r (compressed or not) and
// returns a Scanner for its events. Close releases the decompressor.
func NewScanner(r io.Reader) (*Scanner, error) {
	d, err := decompress(r)
	if err != nil {
		return nil, err
	}
	s := newScanner(Header{}, d, 0)
	if s.h, err = s.readHeader(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// readHeader reads the first line, the header.
func (s *Scanner) readHeader() (Header, error) {
	first, err := s.line()
	blank := len(bytes.TrimSpace(first)) == 0
	switch {
	case errors.Is(err, errCutShort) && blank:
		return Header{}, errors.New("recording cut short inside its header line")
	case errors.Is(err, errCutShort):
		err = io.EOF
	case err != nil && err != io.EOF:
		return Header{}, err
	}
	if blank && !s.ended() {
		return Header{}, errors.New("recording cut short before its header line")
	}
	return parseHeader(first, err == io.EOF)
}

func newScanner(h Header, d decompressed, lineNo int) *Scanner {
	return &Scanner{h: h, br: bufio.NewReaderSize(d.r, 64*1024), done: d.done, ended: d.ended,
		lineNo: lineNo, maxLine: MaxLine, tr: map[source.NodeID]*saves.Tracker{}}
}

// Header is the recording's header.
func (s *Scanner) Header() Header { return s.h }

// Err is the error that ended the scan, nil at the end of the recording or
// where it was cut short (see Truncated).
func (s *Scanner) Err() error { return s.err }

// Truncated says whether the recording ended cut short, and how.
func (s *Scanner) Truncated() (bool, string) { return s.why != "", s.why }

// Close releases the decompressor; it does not close the input.
func (s *Scanner) Close() {
	if s.done != nil {
		s.done()
		s.done = nil
	}
}

// line reads the next line, at most MaxLine long, with its newline; at the
// end of the input the last bytes without one and io.EOF.
func (s *Scanner) line() ([]byte, error) {
	if s.lineNo >= 0 {
		s.lineNo++
	}
	var long []byte
	for {
		b, err := s.br.ReadSlice('\n')
		if err != bufio.ErrBufferFull {
			if long != nil {
				return append(long, b...), err
			}
			return b, err
		}
		if len(long)+len(b) > s.maxLine {
			return nil, fmt.Errorf("%s is longer than %d MiB", s.where(), s.maxLine>>20)
		}
		long = append(long, b...)
	}
}

// where names the line read last, for an error.
func (s *Scanner) where() string {
	if s.lineNo < 0 {
		return "a line"
	}
	return "line " + strconv.Itoa(s.lineNo)
}

// Events yields the events from here on, in order. A read error ends
// them with one last pair that holds it; a recording cut short ends
// without one (see Truncated).
func (s *Scanner) Events() iter.Seq2[source.Event, error] {
	return func(yield func(source.Event, error) bool) {
		for {
			ev, ok := s.Next()
			if !ok {
				if s.err != nil {
					yield(source.Event{}, s.err)
				}
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Next reads the next event; false at the end, where Err and Truncated
// say why. It makes a Scanner a source.EventReader.
func (s *Scanner) Next() (source.Event, bool) {
	if s.next != nil {
		ev := *s.next
		s.next = nil
		return ev, true
	}
	for !s.end {
		line, rerr := s.line()
		switch {
		case errors.Is(rerr, errCutShort):
			// Everything up to the last whole compressed block is in;
			// a line it ends inside was never finished.
			s.why, s.end = "it ends inside a compressed frame (cut short?)", true
		case rerr != nil && rerr != io.EOF:
			s.err, s.end = rerr, true
		case rerr == io.EOF && len(bytes.TrimSpace(line)) == 0:
			s.end = true
			if !s.ended() {
				s.why = "it ends without its index (cut short, or still being written?)"
			}
		case rerr == io.EOF:
			// No newline: the writer never finished this line.
			s.why, s.end = "it ends in a partial line (cut short?)", true
		case len(bytes.TrimSpace(line)) == 0:
			continue
		}
		if s.end {
			break
		}
		ev, err := s.decode(line)
		if err != nil {
			if _, perr := s.br.Peek(1); perr == io.EOF && !s.ended() {
				s.why, s.end = "its last line is unreadable (cut short?)", true
			} else {
				s.err, s.end = fmt.Errorf("recording %s: %w", s.where(), err), true
			}
			break
		}
		if ev.Kind == 0 {
			continue // a kind a newer vkwatch writes
		}
		return ev, true
	}
	return source.Event{}, false
}

// decode reads one event line and derives what it implies.
func (s *Scanner) decode(line []byte) (source.Event, error) {
	var ev source.Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return ev, err
	}
	ev.At = s.h.Epoch.Add(ev.Offset)
	switch {
	case ev.Kind == source.EventSample && ev.Sample == nil:
		return ev, errors.New("a sample event without its sample")
	case ev.Kind == source.EventSample:
		smp := ev.Sample
		smp.Offset, smp.At = ev.Offset, ev.At
		// Seq starts at 0 with every Run of a watcher, which has a tracker
		// of its own; a reconnect within a Run keeps both going.
		tr := s.tracker(ev.Node, smp.Seq == 0)
		started, ended := tr.Observe(smp)
		if ended != nil && s.keep {
			s.derived = append(s.derived, *ended)
		}
		if started {
			// The live run's report is recorded; its start is derived.
			s.next = &source.Event{Node: ev.Node, Kind: source.EventSaveStarted, Offset: ev.Offset, At: ev.At, Sample: smp}
		}
	case ev.Kind == source.EventCommand && ev.Command != nil:
		s.tracker(ev.Node, false).ObserveCommand(ev.Command)
	case ev.Kind == source.EventSpike && ev.Spike != nil:
		s.tracker(ev.Node, false).ObserveSpike(ev.Spike)
	}
	return ev, nil
}

// tracker is node's save tracker; a new one when fresh and the old one
// has seen a sample (a new Run of the watcher).
func (s *Scanner) tracker(node source.NodeID, fresh bool) *saves.Tracker {
	tr := s.tr[node]
	if tr == nil || fresh && tr.Seen() {
		tr = saves.NewTracker(node, s.addr(node))
		s.tr[node] = tr
	}
	return tr
}

// addr is node's address as the header has it (a tracker's reports carry
// it), else the node id.
func (s *Scanner) addr(node source.NodeID) string {
	for _, si := range s.h.Servers {
		if si.Node == node && si.Addr != "" {
			return si.Addr
		}
	}
	return string(node)
}

// parseHeader reads the first line. Anything but a header of this format
// version is an error of one line that says what to do.
func parseHeader(line []byte, eof bool) (Header, error) {
	var h Header
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return h, fmt.Errorf("%w: empty input", ErrNotRecording)
	}
	if bytes.HasPrefix(t, []byte("# {")) && bytes.Contains(t, []byte(FormatName)) {
		return h, fmt.Errorf("this is a CSV recording, which is for spreadsheets; only JSONL recordings can be read back")
	}
	var v struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		VKWatch string `json:"vkwatch"`
	}
	if err := json.Unmarshal(t, &v); err != nil {
		if eof && t[0] == '{' && bytes.Contains(t, []byte(FormatName)) {
			return h, fmt.Errorf("recording cut short inside its header line")
		}
		return h, fmt.Errorf("%w: first line is not a JSON header (starts %s)", ErrNotRecording, preview(t))
	}
	switch {
	case v.Format != FormatName:
		return h, fmt.Errorf("%w: header has no format %q (starts %s)", ErrNotRecording, FormatName, preview(t))
	case v.Version > Version:
		return h, fmt.Errorf("recording format version %d is newer than this vkwatch reads (%d); upgrade vkwatch", v.Version, Version)
	case v.Version != Version:
		by := "the vkwatch that wrote it"
		if v.VKWatch != "" {
			by = "vkwatch " + strconv.Quote(v.VKWatch)
		}
		return h, fmt.Errorf("recording format version %d is an early format this vkwatch does not read (it reads %d); replay it with %s", v.Version, Version, by)
	}
	if err := json.Unmarshal(t, &h); err != nil {
		return h, fmt.Errorf("recording header: %w", err)
	}
	if h.Epoch.IsZero() {
		return h, fmt.Errorf("recording header has no epoch")
	}
	return h, nil
}

// preview quotes the start of a line for an error message.
func preview(b []byte) string {
	const n = 32
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}
