package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/internal/queue"
	"github.com/vkwatch/vkwatch/source/store"
)

// Driver holds a rolling save and what it is planned from: a Status and,
// once planned, a Roll, fed every event in the order the planner wants
// (the status first). It does no I/O: it returns the Actions to send. The
// UI holds one in its fleet view, calls it from Update and sends the
// Actions as tea.Cmds; Drive holds one on a goroutine of its own and sends
// them itself. Not safe for concurrent use.
type Driver struct {
	status  *Status
	cfg     RollConfig
	roll    *Roll
	started time.Duration // the run clock when the roll started
}

// NewDriver returns a driver for the fleet of top, whose rolls use cfg,
// with a status of its own (NewStatus): headless.
func NewDriver(top source.Topology, cfg RollConfig) *Driver {
	return &Driver{status: NewStatus(top), cfg: cfg}
}

// NewDriverOf returns a driver whose status reads each node's state from
// hist (NewStatusOf): the caller adds every event to hist before Observe.
func NewDriverOf(top source.Topology, cfg RollConfig, hist *store.Store) *Driver {
	return &Driver{status: NewStatusOf(top, hist), cfg: cfg}
}

// Observe folds one event in (the status, then the roll) and returns the
// commands the roll wants sent now.
func (d *Driver) Observe(ev source.Event) []Action {
	d.status.Observe(ev)
	if d.roll == nil {
		return nil
	}
	return d.roll.Observe(ev)
}

// Status is the fleet as the driver knows it.
func (d *Driver) Status() *Status { return d.status }

// Config is the configuration of the driver's rolls.
func (d *Driver) Config() RollConfig { return d.cfg }

// Roll is the roll planned, running or over; nil when none.
func (d *Driver) Roll() *Roll { return d.roll }

// Plan plans a roll on what the status knows now, in place of any roll
// that is not running, and returns its steps; nothing is sent until Start.
func (d *Driver) Plan() []Step {
	if d.Active() {
		return d.roll.Steps()
	}
	d.roll = NewRoll(d.status, d.cfg)
	return d.roll.Steps()
}

// Planned reports whether a roll waits to be started.
func (d *Driver) Planned() bool { return d.roll != nil && d.roll.State() == RollPlanned }

// Active reports whether a roll runs (or is held, or finishes after a
// cancel).
func (d *Driver) Active() bool {
	return d.roll != nil && d.roll.State() != RollPlanned && !d.roll.State().Over()
}

// Start starts the planned roll and returns its first commands.
func (d *Driver) Start() []Action {
	if !d.Planned() {
		return nil
	}
	d.started = d.status.Now()
	return d.roll.Start()
}

// Started is the run clock's offset when the roll started.
func (d *Driver) Started() time.Duration { return d.started }

// Confirm sends the node the memory check holds anyway.
func (d *Driver) Confirm() []Action {
	if d.roll == nil {
		return nil
	}
	return d.roll.Confirm()
}

// Cancel drops the nodes of a running roll not started yet.
func (d *Driver) Cancel() {
	if d.Active() {
		d.roll.Cancel()
	}
}

// Drop forgets a roll that is planned or over (a running one stays).
func (d *Driver) Drop() {
	if !d.Active() {
		d.roll = nil
	}
}

// DriveConfig tunes Drive.
type DriveConfig struct {
	Roll RollConfig
	// Ready bounds how long the roll waits for every node to be sampled
	// (or to have failed to connect) before it is planned on what is
	// known; default 10 s.
	Ready time.Duration
	// Emit, when set, gets every event before the driver (a recording,
	// the reports); called from one goroutine.
	Emit func(source.Event)
	// Progress, when set, is called with the roll once it is planned and
	// after every batch of events (a save's progress moves with the
	// samples); from the same goroutine.
	Progress func(r *Roll, st *Status)
}

// ExpectNext is why the roll's next node is probed finely, as the
// header says it.
const ExpectNext = "next in the roll"

// ErrHeld is why Drive stops at a node the memory check holds (and
// RollConfig.Force is not set): a script has nobody to ask.
var ErrHeld = errors.New("held by the memory check")

// Drive runs one rolling save on f, headless: f must be started (Start,
// and Connect, whose results conns are); Drive runs it until the roll is
// over, then stops it. The roll is planned once every node is sampled or
// known to be down (within cfg.Ready) and sent through f.Do, each command
// on a goroutine of its own. A roll held by the memory check is
// cancelled: the error is ErrHeld, and HeldAt names the node. A roll that
// stopped (a refusal, a failed save, a node lost) returns its Progress.Err
// (the node and the server's own words) as the error. When ctx ends, the roll is cancelled
// and Drive returns at once (saves already started run on in the servers).
// It returns the roll as it ended.
func Drive(ctx context.Context, f *Fleet, top source.Topology, conns []Connected, cfg DriveConfig) (*Roll, error) {
	if cfg.Ready <= 0 {
		cfg.Ready = 10 * time.Second
	}
	dr := newDrive(f, top, cfg)
	defer dr.stop()
	dr.connectFailures(conns)
	dr.wg.Go(func() { f.Run(dr.ctx, dr.q.push) })
	ready := time.NewTimer(cfg.Ready)
	defer ready.Stop()
	defer f.Expect("")
	d := dr.d
	for {
		select {
		case <-ctx.Done():
			d.Cancel()
			return d.Roll(), fmt.Errorf("interrupted: %w", ctx.Err())
		case <-ready.C:
			if d.Roll() == nil {
				dr.start()
				cfg.progress(d)
			}
		case <-dr.q.signal():
		}
		dr.observe()
		cfg.progress(d)
		r := d.Roll()
		if r == nil {
			continue
		}
		dr.expectNext(r)
		if r.State() == RollHeld {
			d.Cancel()
			cfg.progress(d)
		}
		if r.State().Over() {
			return r, rollErr(r)
		}
	}
}

// drive is one Drive's roll: its driver, the events coming to it from the
// fleet's goroutines, and the fleet's run and commands (on ctx, waited
// for by stop).
type drive struct {
	f    *Fleet
	d    *Driver
	cfg  DriveConfig
	q    *eventQueue
	ctx  context.Context
	end  context.CancelFunc
	wg   sync.WaitGroup
	next []source.NodeID // what f was told to expect
}

func newDrive(f *Fleet, top source.Topology, cfg DriveConfig) *drive {
	ctx, end := context.WithCancel(context.Background())
	return &drive{f: f, d: NewDriver(top, cfg.Roll), cfg: cfg, q: newEventQueue(), ctx: ctx, end: end}
}

// stop ends the fleet's run and waits for it and the commands.
func (dr *drive) stop() {
	dr.end()
	dr.wg.Wait()
}

// connectFailures tells the roll of each node Connect could not reach.
func (dr *drive) connectFailures(conns []Connected) {
	for _, c := range conns {
		if c.Err != nil {
			off, at := dr.f.clock.Now()
			dr.q.push(source.Event{Node: c.Member.ID, Kind: source.EventDisconnected, Offset: off, At: at, Err: c.Err.Error()})
		}
	}
}

// send sends acts through the fleet, each on a goroutine of its own.
func (dr *drive) send(acts []Action) {
	for _, a := range acts {
		dr.wg.Go(func() {
			res := dr.f.Do(dr.ctx, a.Node, a.Args...)
			// The answer reaches the roll as an event (the node's
			// watcher's, or the fleet's for a node that left); it is
			// handed over here too, in case the watcher stopped before
			// it said it (twice is harmless).
			off, at := dr.f.clock.Now()
			dr.q.pushOwn(source.Event{Node: a.Node, Kind: source.EventCommand, Offset: off, At: at, Command: &res})
		})
	}
}

// start plans the roll and sends its first commands.
func (dr *drive) start() {
	dr.d.Plan()
	dr.send(dr.d.Start())
}

// observe hands the driver the events that came (emitting those not
// Drive's own) and sends what they call for; the roll starts once every
// node is known.
func (dr *drive) observe() {
	for _, it := range dr.q.take() {
		if !it.own && dr.cfg.Emit != nil {
			dr.cfg.Emit(it.ev)
		}
		dr.send(dr.d.Observe(it.ev))
	}
	if dr.d.Roll() == nil && allKnown(dr.d.Status()) {
		dr.start()
	}
}

// expectNext has the fleet probe the roll's next nodes finely.
func (dr *drive) expectNext(r *Roll) {
	if n := r.Next(); !slices.Equal(n, dr.next) {
		dr.next = n
		dr.f.Expect(ExpectNext, n...)
	}
}

// rollErr is what a roll that is over ends Drive with: nil when it
// finished, the node and the server's words when it failed, ErrHeld when
// the memory check held it.
func rollErr(r *Roll) error {
	switch p := r.Progress(); {
	case p.State == RollFailed:
		return errors.New(p.Err)
	case p.State == RollCancelled:
		if _, held := HeldAt(r); held {
			return ErrHeld
		}
		return errors.New("cancelled")
	}
	return nil
}

func (c DriveConfig) progress(d *Driver) {
	if c.Progress != nil && d.Roll() != nil {
		c.Progress(d.Roll(), d.Status())
	}
}

// HeldAt returns the step of a roll Drive stopped at the memory check:
// the first step left unsent whose verdict exceeds a limit.
func HeldAt(r *Roll) (Step, bool) {
	for _, st := range r.Steps() {
		if st.State == StepCancelled && st.Risk.Exceeds() {
			return st, true
		}
	}
	return Step{}, false
}

// allKnown reports whether every node of st is sampled or known to be
// down: what a roll is planned on.
func allKnown(st *Status) bool {
	for _, n := range st.Nodes() {
		if n.Sample == nil && n.Err == "" {
			return false
		}
	}
	return true
}

// eventQueue hands events from the fleet's goroutines to Drive's one,
// unbounded (a roll lasts minutes; Drive takes them as fast as they come)
// and in order per node.
type eventQueue struct{ q *queue.Queue[queued] }

type queued struct {
	ev  source.Event
	own bool // Drive's own copy of a command's answer: not emitted
}

func newEventQueue() *eventQueue { return &eventQueue{q: queue.New[queued]()} }

func (q *eventQueue) push(ev source.Event)    { q.q.Push(queued{ev: ev}) }
func (q *eventQueue) pushOwn(ev source.Event) { q.q.Push(queued{ev: ev, own: true}) }
func (q *eventQueue) take() []queued          { return q.q.Swap(nil) }
func (q *eventQueue) signal() <-chan struct{} { return q.q.Ready() }
