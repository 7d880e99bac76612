package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"

	"github.com/vkwatch/vkwatch/source"
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
	// Orphans is how many delta samples could not be read for want of
	// their node's full sample before them: never in a whole recording
	// read from its start; a piece of one read on its own may have some.
	Orphans int
}

// ErrNotRecording is wrapped by Read's error when the input is not a
// vkwatch recording at all.
var ErrNotRecording = errors.New("not a vkwatch recording")

var kinds = map[string]source.EventKind{}

func init() {
	for _, k := range source.EventKinds() {
		kinds[k.String()] = k
	}
}

// Read parses a JSONL recording up to its last whole line. A line cut short
// at the end sets Truncated; a bad line before the end is an error, as is
// input that is not a recording or was written by a newer format version.
//
// A compressed recording (zstd or gzip, told by its first bytes) is read
// through its decompressor; one cut short inside a frame reads up to its
// last whole block and sets Truncated. Read holds every event: a long
// recording is better streamed with a Scanner.
func Read(r io.Reader) (*Recording, error) {
	rec := &Recording{}
	sc, err := scanEach(r, func(h Header) { rec.Header = h }, func(ev source.Event) { rec.Events = append(rec.Events, ev) })
	if err != nil {
		return nil, err
	}
	rec.Truncated, rec.Why = sc.Truncated()
	rec.Orphans = sc.Orphans()
	return rec, sc.Err()
}

// scanEach reads the recording r through once: head with its header, then
// each with every event. The Scanner it returns, closed, says how the
// recording ended (Truncated, Err, Orphans).
func scanEach(r io.Reader, head func(Header), each func(source.Event)) (*Scanner, error) {
	sc, err := NewScanner(r)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	head(sc.Header())
	for sc.Next() {
		each(sc.Event())
	}
	return sc, nil
}

// Scanner reads a recording one event at a time, so that a recording of a
// night never has to fit in memory.
type Scanner struct {
	h      Header
	br     *bufio.Reader
	done   func()
	ended  func() bool // whether the writer's end mark was read (see decompress)
	ev     source.Event
	err    error
	why    string // set when the recording was cut short
	lineNo int
	end    bool
	// bases are each node's last sample read: what a delta line applies to.
	bases   map[source.NodeID]*source.Sample
	orphans int
	latest  time.Duration // the latest offset of any line read, orphans too
}

// Latest is the latest offset of the lines read so far, orphans included.
func (s *Scanner) Latest() time.Duration { return s.latest }

// Orphans is how many delta samples were skipped because the scan started
// after their node's last full sample (a scan from a seek point).
func (s *Scanner) Orphans() int { return s.orphans }

// NewScanner reads the header of the recording r (compressed or not) and
// returns a Scanner for its events. Close releases the decompressor.
func NewScanner(r io.Reader) (*Scanner, error) {
	d, err := decompress(r)
	if err != nil {
		return nil, err
	}
	done := d.done
	br := bufio.NewReaderSize(d.r, 64*1024)
	first, err := br.ReadBytes('\n')
	if errors.Is(err, errCutShort) {
		if len(bytes.TrimSpace(first)) == 0 {
			done()
			return nil, fmt.Errorf("recording cut short inside its header line")
		}
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		done()
		return nil, err
	}
	h, err := parseHeader(first, err == io.EOF)
	if err != nil {
		done()
		return nil, err
	}
	return &Scanner{h: h, br: br, done: done, ended: d.ended, lineNo: 1}, nil
}

// Header is the recording's header.
func (s *Scanner) Header() Header { return s.h }

// Event is the event Next read.
func (s *Scanner) Event() source.Event { return s.ev }

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

// Next reads the next event; false at the end, where Err and Truncated
// say why.
func (s *Scanner) Next() bool {
	for !s.end {
		line, rerr := s.br.ReadBytes('\n')
		s.lineNo++
		if errors.Is(rerr, errCutShort) {
			// Everything up to the last whole compressed block is in;
			// a line it ends inside was never finished.
			s.why, s.end = "it ends inside a compressed frame (cut short?)", true
			return false
		}
		if rerr != nil && rerr != io.EOF {
			s.err, s.end = rerr, true
			return false
		}
		if rerr == io.EOF && len(bytes.TrimSpace(line)) == 0 {
			s.end = true
			s.checkEnd()
			return false
		}
		whole := rerr == nil
		s.end = !whole
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !whole {
			// No newline: the writer never finished this line.
			s.why = "it ends in a partial line (cut short?)"
			return false
		}
		if s.bases == nil {
			s.bases = map[source.NodeID]*source.Sample{}
		}
		ev, err := decodeEvent(line, &s.h, s.bases)
		if errors.Is(err, errNoBase) {
			s.orphans++ // a seek landed after this node's full sample
			s.latest = max(s.latest, ev.Offset)
			continue
		}
		if err != nil {
			if _, perr := s.br.Peek(1); perr == io.EOF {
				s.why, s.end = "its last line is unreadable (cut short?)", true
				return false
			}
			s.err, s.end = fmt.Errorf("recording line %d: %w", s.lineNo, err), true
			return false
		}
		s.ev = ev
		s.latest = max(s.latest, ev.Offset)
		return true
	}
	return false
}

// checkEnd, at the end of a whole last line, says the recording was cut
// short when its format has an end mark (version 4 on) and none was read: a
// compressed file cut exactly between two frames, or one still being
// written.
func (s *Scanner) checkEnd() {
	if s.h.Version >= 4 && s.ended != nil && !s.ended() {
		s.why = "it ends without the writer's end mark (cut short, or still being written?)"
	}
}

func parseHeader(line []byte, eof bool) (Header, error) {
	var h Header
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return h, fmt.Errorf("%w: empty input", ErrNotRecording)
	}
	if bytes.HasPrefix(t, []byte("# {")) && bytes.Contains(t, []byte(FormatName)) {
		return h, fmt.Errorf("this is a CSV recording, which is for spreadsheets; only JSONL recordings can be read back")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		if eof && len(t) > 0 && t[0] == '{' && bytes.Contains(t, []byte(FormatName)) {
			return h, fmt.Errorf("recording cut short inside its header line")
		}
		return h, fmt.Errorf("%w: first line is not a JSON header (starts %s)", ErrNotRecording, preview(t))
	}
	if err := json.Unmarshal(m["format"], &h.Format); err != nil || h.Format != FormatName {
		return h, fmt.Errorf("%w: header has no format %q (starts %s)", ErrNotRecording, FormatName, preview(t))
	}
	if err := json.Unmarshal(m["version"], &h.Version); err != nil || h.Version < 1 {
		return h, fmt.Errorf("recording header has no valid version")
	}
	if h.Version > Version {
		return h, fmt.Errorf("recording format version %d is newer than this vkwatch reads (up to %d); upgrade vkwatch", h.Version, Version)
	}
	if raw, ok := m["vkwatch"]; ok {
		json.Unmarshal(raw, &h.VKWatch)
	}
	if err := decodeValue(m["epoch"], reflect.ValueOf(&h.Epoch).Elem(), 0); err != nil || h.Epoch.IsZero() {
		return h, fmt.Errorf("recording header has no valid epoch")
	}
	if raw, ok := m["settings"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &h.Settings); err != nil {
			return h, fmt.Errorf("recording header settings: %w", err)
		}
	}
	if raw, ok := m["servers"]; ok && !isNull(raw) {
		var servers []json.RawMessage
		if err := json.Unmarshal(raw, &servers); err != nil {
			return h, fmt.Errorf("recording header servers: %w", err)
		}
		for i, sraw := range servers {
			var sm map[string]json.RawMessage
			if err := json.Unmarshal(sraw, &sm); err != nil {
				return h, fmt.Errorf("recording header server %d: %w", i, err)
			}
			var si ServerInfo
			json.Unmarshal(sm["addr"], &si.Addr)
			json.Unmarshal(sm["node"], &si.Node)
			if si.Node == "" {
				// Version 1 had no node ids: a server was its address.
				si.Node = source.NodeID(si.Addr)
			}
			if raw, ok := sm["identity"]; ok && !isNull(raw) {
				si.Identity = new(source.Identity)
				if err := decodeStruct(raw, reflect.ValueOf(si.Identity).Elem()); err != nil {
					return h, fmt.Errorf("recording header server %d identity: %w", i, err)
				}
			}
			h.Servers = append(h.Servers, si)
		}
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
