// Package replay plays a recording through the monitor (package ui's
// Model) at a chosen speed: space pauses, left and right seek 10 s, home
// and end jump, g types a time. Every other key goes to the monitor (tab,
// ?, q...). It streams: a read ahead (a tea.Cmd) brings in a couple of
// seconds past the cursor at a time, and a seek resets the monitor's
// history (ui.ResetMsg) and feeds it the history window before the
// target, read from the nearest seek point of the file. Commands cannot
// reach a recording: the monitor is read-only. It tells the monitor where
// playback stands with ui.StatusMsg, shown in the title line.
package replay

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/ui"
)

// replayStep is how often playback advances: ten frames a second is
// smooth enough for charts that move one column every second or so.
const replayStep = 100 * time.Millisecond

// replaySeek is how far left and right jump.
const replaySeek = 10 * time.Second

// replayAhead is how much recording a read brings in ahead of the cursor,
// in playback time: reads are few, and what is in memory stays small.
const replayAhead = 2 * time.Second

// Source is a recording as a replay reads it: streamed, from about
// any offset on, so only the history window around the cursor is ever in
// memory. Its readers are used from tea.Cmds, one at a time.
type Source interface {
	// Span is the offsets of the first and the last event.
	Span() (start, end time.Duration)
	// From returns a reader of the events from at or a little before t
	// (a recording's frames are its seek points), in about offset order.
	From(t time.Duration) (Reader, error)
	// Preamble is what a replay knows of the servers before it reads a
	// byte at t: their identities, as connected events. Fed after a reset.
	Preamble(t time.Duration) []source.Event
}

// Reader reads events in order (record.WindowSource's readers are
// ones).
type Reader = source.EventReader

// Options are a replay's settings besides the monitor's Config.
type Options struct {
	Speed float64 // times real time; 1 when not positive
	// Epoch is the recording clock's wall time at offset 0: the status
	// line shows the wall time of the cursor. Zero: not shown.
	Epoch time.Time
	// ParseTime reads a time typed after g (03:00, +90m) as an offset; nil
	// disables g.
	ParseTime func(string) (time.Duration, error)
}

// replayTick advances playback. gen ties it to the playback that asked for
// it: a tick still in flight after a pause or a seek is dropped, so resuming
// never runs two tick chains at once.
type replayTick struct{ gen int }

// replayRead is what a read ahead brought in.
type replayRead struct {
	gen int
	rd  Reader
	evs []source.Event
	eof bool
	err error
}

// replaySeeked is a chunk of a seek's history window: the events to feed
// (after a reset, for the first), and once done those read past the target.
type replaySeeked struct {
	gen    int
	target time.Duration
	from   time.Duration // the history window's start: reports before it stay
	rd     Reader
	next   *source.Event // read, and not taken yet: the next chunk's first
	warm   []source.Event
	ahead  []source.Event
	first  bool // the window's first chunk
	done   bool // the last: the target is reached, or the reader ended
	eof    bool
	err    error
}

// replayKeys are the keys Model handles before the monitor's own.
type replayKeys struct {
	Play, Back, Forward, Home, End, Goto key.Binding
	// Interrupt is ctrl+c, which is never typed text: it quits at once
	// (the monitor's), even while a time is being typed.
	Interrupt key.Binding
}

// Model is a replay: the monitor's Model inside, the recording, and where
// playback stands. It implements tea.Model.
type Model struct {
	cfg   ui.Config
	opts  Options
	inner ui.Model
	src   Source
	rd    Reader         // nil until the first seek lands
	buf   []source.Event // read, not fed yet, in offset order
	eof   bool           // rd has nothing more
	// reading: a read ahead (or seek) is in flight; its reader must not be
	// used or closed here until it answers.
	reading bool
	seeking bool
	pos     time.Duration // playback position, as an event offset
	start   time.Duration
	end     time.Duration
	paused  bool
	gen     int
	keys    replayKeys
	err     string

	typing bool   // g pressed: a time is being typed
	typed  string // what was typed

	width, height int
	sized         bool
}

// NewOfEvents builds a replay of events held in memory (as read from a
// recording) at speed times real time.
func NewOfEvents(cfg ui.Config, events []source.Event, speed float64) Model {
	return New(cfg, MemorySource(events), Options{Speed: speed})
}

// New builds a replay of src through a monitor configured by cfg (made
// read-only). Init starts it at the recording's start.
func New(cfg ui.Config, src Source, opts Options) Model {
	cfg.ReadOnly, cfg.ReadOnlyWhy = true, "a recording takes no commands"
	cfg.Send = nil
	if opts.Speed <= 0 {
		opts.Speed = 1
	}
	r := Model{
		cfg:   cfg,
		opts:  opts,
		inner: ui.New(cfg),
		src:   src,
		keys: replayKeys{
			Play:    key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "play/pause")),
			Back:    key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "back 10s")),
			Forward: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "forward 10s")),
			Home:    key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "start")),
			End:     key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "end")),
			Goto:    key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "go to a time")),
			// Not in the help: the monitor's own ctrl+c is.
			Interrupt: key.NewBinding(key.WithKeys("ctrl+c")),
		},
	}
	r.start, r.end = src.Span()
	r.pos = r.start
	r.seeking = true
	r.showStatus()
	return r
}

// Init implements tea.Model: the first seek, to the start.
func (r Model) Init() tea.Cmd { return r.seekCmd(r.start) }

// Update implements tea.Model.
func (r Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case replayTick:
		if msg.gen != r.gen || r.paused || r.atEnd() || r.seeking {
			return r, nil
		}
		r.pos += time.Duration(r.opts.Speed * float64(replayStep))
		r.feed()
		return r, tea.Batch(r.readCmd(), r.tickUnlessEnd())
	case replayRead:
		if msg.gen != r.gen {
			msg.rd.Close() // a seek replaced this reader while it read
			return r, nil
		}
		r.reading = false
		r.buf = append(r.buf, msg.evs...)
		r.eof = msg.eof
		if msg.err != nil {
			r.err = msg.err.Error()
		}
		r.feed()
		return r, r.readCmd()
	case replaySeeked:
		if msg.gen != r.gen {
			if msg.rd != nil {
				msg.rd.Close()
			}
			return r, nil
		}
		cmd := r.landSeek(msg)
		return r, cmd
	case tea.WindowSizeMsg:
		r.width, r.height, r.sized = msg.Width, msg.Height, true
	case tea.KeyMsg:
		if r.typing && !key.Matches(msg, r.keys.Interrupt) {
			return r.typeKey(msg)
		}
		switch {
		case key.Matches(msg, r.keys.Play):
			if r.atEnd() { // play again from the start
				r.paused = false
				return r, r.seekTo(r.start)
			}
			r.paused = !r.paused
			if r.seeking {
				// The seek in flight lands and heeds paused; a new gen
				// would drop it and leave the replay seeking for ever.
				r.showStatus()
				return r, nil
			}
			r.gen++ // the tick in flight belongs to the old state
			if r.reading {
				r.reading = true // its answer is dropped; read again below
			}
			r.showStatus()
			if r.paused {
				return r, nil
			}
			return r, r.tick()
		case key.Matches(msg, r.keys.Back):
			return r, r.seekTo(r.pos - replaySeek)
		case key.Matches(msg, r.keys.Forward):
			return r, r.seekTo(r.pos + replaySeek)
		case key.Matches(msg, r.keys.Home):
			return r, r.seekTo(r.start)
		case key.Matches(msg, r.keys.End):
			return r, r.seekTo(r.end)
		case key.Matches(msg, r.keys.Goto) && r.opts.ParseTime != nil:
			r.typing, r.typed = true, ""
			r.showStatus()
			return r, nil
		}
	}
	m, cmd := r.inner.Update(msg)
	r.inner = m.(ui.Model)
	return r, cmd
}

// typeKey takes the keys of a time typed after g: enter goes there, esc
// gives up.
func (r Model) typeKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.Type {
	case tea.KeyEnter:
		r.typing = false
		d, err := r.opts.ParseTime(strings.TrimSpace(r.typed))
		if err != nil {
			r.err = fmt.Sprintf("g %s: %v", r.typed, err)
			r.showStatus()
			return r, nil
		}
		r.err = ""
		return r, r.seekTo(d)
	case tea.KeyEsc:
		r.typing = false
	case tea.KeyBackspace:
		if r.typed != "" {
			r.typed = r.typed[:len(r.typed)-1]
		}
	case tea.KeyRunes:
		if len(r.typed) < 40 {
			r.typed += string(msg.Runes)
		}
	}
	r.showStatus()
	return r, nil
}

// View implements tea.Model.
func (r Model) View() string { return r.inner.View() }

// Reports returns the save reports replayed so far.
func (r Model) Reports() []source.SaveReport { return r.inner.Reports() }

func (r Model) tick() tea.Cmd { return replayTicker(r.gen) }

// replayTicker schedules the next tick (a test delivers ticks itself).
var replayTicker = func(gen int) tea.Cmd {
	return tea.Tick(replayStep, func(time.Time) tea.Msg { return replayTick{gen: gen} })
}

func (r Model) tickUnlessEnd() tea.Cmd {
	if r.atEnd() {
		return nil
	}
	return r.tick()
}

func (r *Model) atEnd() bool {
	return !r.seeking && r.pos >= r.end && len(r.buf) == 0 && (r.eof || r.rd == nil)
}

// feed feeds the monitor the buffered events up to the cursor, as one batch.
func (r *Model) feed() {
	r.pos = min(max(r.pos, r.start), r.end)
	k := 0
	for k < len(r.buf) && r.buf[k].Offset <= r.pos {
		k++
	}
	if k > 0 {
		m, _ := r.inner.Update(ui.EventsMsg(slices.Clone(r.buf[:k])))
		r.inner = m.(ui.Model)
		r.buf = r.buf[k:]
	}
	r.showStatus()
}

// readCmd reads ahead when the buffer runs short of replayAhead of
// playback past the cursor and no read is in flight.
func (r *Model) readCmd() tea.Cmd {
	if r.reading || r.seeking || r.eof || r.rd == nil {
		return nil
	}
	until := r.pos + time.Duration(r.opts.Speed*float64(replayAhead))
	if n := len(r.buf); n > 0 && r.buf[n-1].Offset >= until {
		return nil
	}
	r.reading = true
	rd, gen := r.rd, r.gen
	return func() tea.Msg {
		msg := replayRead{gen: gen, rd: rd}
		for len(msg.evs) < 20000 {
			ev, ok := rd.Next()
			if !ok {
				msg.eof, msg.err = true, rd.Err()
				break
			}
			msg.evs = append(msg.evs, ev)
			if ev.Offset > until {
				break
			}
		}
		sortByOffset(msg.evs)
		return msg
	}
}

// seekTo starts a seek to pos: playback holds until it lands.
func (r *Model) seekTo(pos time.Duration) tea.Cmd {
	pos = min(max(pos, r.start), r.end)
	r.gen++ // what is in flight belongs to the old position
	if r.rd != nil && !r.reading {
		r.rd.Close()
	}
	r.rd, r.buf, r.eof, r.reading, r.seeking = nil, nil, false, false, true
	r.pos = pos
	r.showStatus()
	return r.seekCmd(pos)
}

// seekChunk is how many events of the history window a seek reads at a
// time: the window is fed to the monitor a chunk at a time, so what a seek
// holds is a chunk, whatever the window (10 s of six servers at 10 ms is
// 6,000 samples) or the file's length.
const seekChunk = 2000

// seekCmd starts reading the history window before target (the monitor's
// history, from the nearest seek point before it) and a little past it: a
// first chunk, which resets the monitor's history; seekMore reads the rest.
func (r Model) seekCmd(target time.Duration) tea.Cmd {
	src, gen, keep := r.src, r.gen, r.inner.Keep()
	return func() tea.Msg {
		from := target - keep
		msg := replaySeeked{gen: gen, target: target, from: from, first: true}
		rd, err := src.From(from)
		if err != nil {
			msg.err, msg.eof, msg.done = err, true, true
			return msg
		}
		msg.rd = rd
		var carried []source.Event
		for {
			ev, ok := rd.Next()
			if !ok {
				msg.eof, msg.err, msg.done = true, rd.Err(), true
				break
			}
			if ev.Offset >= from {
				msg.next = &ev
				break
			}
			// Before the window: only what says where things stand.
			if ev.Kind == source.EventTopology || ev.Kind == source.EventConnected || ev.Kind == source.EventDisconnected {
				carried = append(carried, ev)
			}
		}
		for i := range carried {
			carried[i].Offset = max(from, 0)
		}
		msg.warm = append(src.Preamble(from), carried...)
		if !msg.done {
			r.readWindow(&msg)
		}
		return msg
	}
}

// seekMore reads the next chunk of the history window a seek feeds.
func (r Model) seekMore(prev replaySeeked) tea.Cmd {
	return func() tea.Msg {
		msg := replaySeeked{gen: prev.gen, target: prev.target, from: prev.from, rd: prev.rd, next: prev.next}
		r.readWindow(&msg)
		return msg
	}
}

// readWindow reads up to a chunk of the window into msg.warm; past the
// target, it reads a little ahead (replayAhead) into msg.ahead and is done.
func (r Model) readWindow(msg *replaySeeked) {
	until := msg.target + time.Duration(r.opts.Speed*float64(replayAhead))
	for n := 0; ; n++ {
		var ev source.Event
		if msg.next != nil {
			ev, msg.next = *msg.next, nil
		} else if e, ok := msg.rd.Next(); ok {
			ev = e
		} else {
			msg.eof, msg.err, msg.done = true, msg.rd.Err(), true
			break
		}
		switch {
		case ev.Kind == source.EventSaveEnded && ev.Report != nil && ev.Report.Ended < msg.from:
			continue // the store kept its report
		case ev.Offset <= msg.target:
			if n >= seekChunk {
				msg.next = &ev
				sortByOffset(msg.warm)
				return
			}
			msg.warm = append(msg.warm, ev)
		default:
			msg.ahead = append(msg.ahead, ev)
		}
		if ev.Offset > until {
			msg.done = true
			break
		}
	}
	sortByOffset(msg.warm)
	sortByOffset(msg.ahead)
}

// landSeek feeds the monitor a chunk of the window before the target, the
// first after resetting its history (the Model, and all the user chose to
// look at, stay), and asks for the next chunk until the target is reached;
// then playback goes on from there (reading ahead, and ticking unless
// paused or at the end).
func (r *Model) landSeek(msg replaySeeked) tea.Cmd {
	if msg.first {
		m, _ := r.inner.Update(ui.ResetMsg(msg.from))
		r.inner = m.(ui.Model)
		r.err = ""
	}
	if msg.err != nil {
		r.err = msg.err.Error()
	}
	if len(msg.warm) > 0 {
		m, _ := r.inner.Update(ui.EventsMsg(msg.warm))
		r.inner = m.(ui.Model)
	}
	if !msg.done {
		return r.seekMore(msg)
	}
	r.seeking = false
	r.rd, r.eof = msg.rd, msg.eof
	r.buf = msg.ahead
	r.pos = msg.target
	r.feed()
	if r.paused || r.atEnd() {
		return r.readCmd()
	}
	return tea.Batch(r.readCmd(), r.tick())
}

// sortByOffset orders events by offset, keeping each server's own order:
// recordings interleave servers as their events arrived.
func sortByOffset(evs []source.Event) {
	slices.SortStableFunc(evs, func(a, b source.Event) int {
		switch {
		case a.Offset < b.Offset:
			return -1
		case a.Offset > b.Offset:
			return 1
		}
		return 0
	})
}

// showStatus puts the playback position in the monitor's title line.
func (r *Model) showStatus() {
	state := fmt.Sprintf("▶ x%g", r.opts.Speed)
	switch {
	case r.seeking:
		state = "… seeking"
	case r.paused:
		state = "❚❚ paused (space plays)"
	case r.atEnd():
		state = "■ end (space replays)"
	}
	wall := ""
	if !r.opts.Epoch.IsZero() {
		wall = " " + r.opts.Epoch.Add(r.pos).Local().Format("15:04:05")
	}
	hint := "←/→ seek"
	if r.opts.ParseTime != nil {
		hint += ", g time"
	}
	switch {
	case r.typing:
		hint = "go to: " + r.typed + "▏ (enter, esc)"
	case r.err != "":
		hint = "✗ " + r.err
	}
	m, _ := r.inner.Update(ui.StatusMsg(fmt.Sprintf("replay %s / %s%s  %s  %s", fmtClock(r.pos-r.start), fmtClock(r.end-r.start), wall, state, hint)))
	r.inner = m.(ui.Model)
}

// fmtClock renders a playback position as m:ss (h:mm:ss past an hour).
func fmtClock(d time.Duration) string {
	d = d.Truncate(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%d:%02d:%02d", d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second)
	}
	return fmt.Sprintf("%d:%02d", d/time.Minute, (d%time.Minute)/time.Second)
}

// MemorySource is a Source of events held in memory.
func MemorySource(events []source.Event) Source {
	evs := slices.Clone(events)
	sortByOffset(evs)
	return memSource(evs)
}

type memSource []source.Event

func (s memSource) Span() (time.Duration, time.Duration) {
	if len(s) == 0 {
		return 0, 0
	}
	return s[0].Offset, s[len(s)-1].Offset
}

// From reads from the start: the whole is in memory anyway.
func (s memSource) From(time.Duration) (Reader, error) { return &memReader{evs: s}, nil }

func (s memSource) Preamble(time.Duration) []source.Event { return nil }

type memReader struct {
	evs []source.Event
	i   int
}

func (m *memReader) Next() (source.Event, bool) {
	if m.i >= len(m.evs) {
		return source.Event{}, false
	}
	m.i++
	return m.evs[m.i-1], true
}

func (m *memReader) Err() error { return nil }
func (m *memReader) Close()     {}
