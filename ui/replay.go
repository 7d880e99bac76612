package ui

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
)

// replayStep is how often playback advances: ten frames a second is
// smooth enough for charts that move one column every second or so.
const replayStep = 100 * time.Millisecond

// replaySeek is how far left and right jump.
const replaySeek = 10 * time.Second

// newReplayModel is the monitor inside a replay: read-only, and saying
// why in words that fit a recording.
func newReplayModel(cfg Config) Model {
	m := New(cfg)
	m.readOnlyWhy = "a recording takes no commands"
	return m
}

// replayTick advances playback. gen ties it to the playback that asked for
// it: a tick still in flight after a pause or a seek is dropped, so resuming
// never runs two tick chains at once.
type replayTick struct{ gen int }

// replayKeys are the keys Replay handles before the monitor's own.
type replayKeys struct {
	Play, Back, Forward key.Binding
}

// Replay plays recorded events through the monitor's Model at a chosen
// speed: space pauses, left and right seek 10 s. Every other key goes to
// the monitor (tab, ?, q...). It implements tea.Model.
//
// Commands cannot reach a recording: the monitor is always read-only here.
type Replay struct {
	cfg    Config
	inner  Model
	events []source.Event // in offset order
	next   int            // first event not fed yet
	pos    time.Duration  // playback position, as an event offset
	start  time.Duration
	end    time.Duration
	speed  float64
	paused bool
	gen    int
	keys   replayKeys

	width, height int
	sized         bool
}

// NewReplay builds a replay of events (as read from a recording) through a
// Model configured by cfg, at speed times real time (1 when not positive).
func NewReplay(cfg Config, events []source.Event, speed float64) Replay {
	cfg.ReadOnly = true
	cfg.Send = nil
	if speed <= 0 {
		speed = 1
	}
	evs := slices.Clone(events)
	// Recordings interleave servers and are written in arrival order; a
	// stable sort by offset keeps each server's own order.
	slices.SortStableFunc(evs, func(a, b source.Event) int {
		switch {
		case a.Offset < b.Offset:
			return -1
		case a.Offset > b.Offset:
			return 1
		}
		return 0
	})
	r := Replay{
		cfg:    cfg,
		inner:  newReplayModel(cfg),
		events: evs,
		speed:  speed,
		keys: replayKeys{
			Play:    key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "play/pause")),
			Back:    key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "back 10s")),
			Forward: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "forward 10s")),
		},
	}
	if len(evs) > 0 {
		r.start, r.end = evs[0].Offset, evs[len(evs)-1].Offset
	}
	r.pos = r.start
	r.feedTo(r.pos)
	return r
}

// Init implements tea.Model: playback starts at once.
func (r Replay) Init() tea.Cmd { return r.tick() }

// Update implements tea.Model.
func (r Replay) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case replayTick:
		if msg.gen != r.gen || r.paused || r.atEnd() {
			return r, nil
		}
		r.pos += time.Duration(r.speed * float64(replayStep))
		r.feedTo(r.pos)
		if r.atEnd() {
			return r, nil
		}
		return r, r.tick()
	case tea.WindowSizeMsg:
		r.width, r.height, r.sized = msg.Width, msg.Height, true
	case tea.KeyMsg:
		switch {
		case key.Matches(msg, r.keys.Play):
			if r.atEnd() { // play again from the start
				r.paused = false
				r.seek(r.start)
				return r, r.tick()
			}
			r.paused = !r.paused
			r.gen++
			r.showStatus()
			if r.paused {
				return r, nil
			}
			return r, r.tick()
		case key.Matches(msg, r.keys.Back), key.Matches(msg, r.keys.Forward):
			d := replaySeek
			if key.Matches(msg, r.keys.Back) {
				d = -d
			}
			r.seek(r.pos + d)
			if r.paused || r.atEnd() {
				return r, nil
			}
			return r, r.tick() // seek dropped the tick in flight
		}
	}
	m, cmd := r.inner.Update(msg)
	r.inner = m.(Model)
	return r, cmd
}

// View implements tea.Model.
func (r Replay) View() string { return r.inner.View() }

// Reports returns the save reports replayed so far.
func (r Replay) Reports() []source.SaveReport { return r.inner.Reports() }

func (r Replay) tick() tea.Cmd {
	gen := r.gen
	return tea.Tick(replayStep, func(time.Time) tea.Msg { return replayTick{gen: gen} })
}

func (r *Replay) atEnd() bool { return r.next >= len(r.events) && r.pos >= r.end }

// feedTo feeds the events up to pos to the monitor, as one batch.
func (r *Replay) feedTo(pos time.Duration) {
	r.pos = min(max(pos, r.start), r.end)
	k := r.next
	for k < len(r.events) && r.events[k].Offset <= r.pos {
		k++
	}
	if k > r.next {
		m, _ := r.inner.Update(EventsMsg(r.events[r.next:k]))
		r.inner = m.(Model)
		r.next = k
	}
	r.showStatus()
}

// seek moves playback to pos. Going forward feeds the events in between;
// going back rebuilds the monitor from the start, since state is folded
// and cannot be unfolded. Focus, the help switch, the scale mode, the
// reports table (open, and where it was scrolled) and the cost view
// survive.
func (r *Replay) seek(pos time.Duration) {
	pos = min(max(pos, r.start), r.end)
	if pos < r.pos {
		old := r.inner
		r.inner = newReplayModel(r.cfg)
		r.inner.carryView(&old)
		if r.sized {
			m, _ := r.inner.Update(tea.WindowSizeMsg{Width: r.width, Height: r.height})
			r.inner = m.(Model)
		}
		r.next = 0
		r.pos = r.start
	}
	r.gen++ // a tick in flight belongs to the old position
	r.feedTo(pos)
}

// showStatus puts the playback position in the monitor's title line.
func (r *Replay) showStatus() {
	state := fmt.Sprintf("▶ x%g", r.speed)
	switch {
	case r.paused:
		state = "❚❚ paused (space plays)"
	case r.atEnd():
		state = "■ end (space replays)"
	}
	r.inner.setStatus(fmt.Sprintf("replay %s / %s  %s  ←/→ seek", fmtClock(r.pos-r.start), fmtClock(r.end-r.start), state))
}

// fmtClock renders a playback position as m:ss.
func fmtClock(d time.Duration) string {
	d = d.Truncate(time.Second)
	return fmt.Sprintf("%d:%02d", d/time.Minute, (d%time.Minute)/time.Second)
}
