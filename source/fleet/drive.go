package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/queue"
	"github.com/vkwatch/vkwatch/source/roll"
)

// DriveConfig tunes Drive.
type DriveConfig struct {
	Roll roll.Config
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
	Progress func(r *roll.Roll, st *roll.Status)
}

// ErrHeld is why Drive stops at a node the memory check holds (and
// roll.Config.Force is not set): a script has nobody to ask.
var ErrHeld = errors.New("held by the memory check")

// Drive runs one rolling save on f, headless: f must be started (Start,
// and Connect, whose results conns are); Drive runs it until the roll is
// over, then stops it. The roll is planned once every node is sampled or
// known to be down (within cfg.Ready) and sent through f.Do, each command
// on a goroutine of its own. A roll held by the memory check is
// cancelled: the error is ErrHeld, and roll.HeldAt names the node. A roll that
// stopped (a refusal, a failed save, a node lost) returns its roll.Progress.Err
// (the node and the server's own words) as the error. When ctx ends, the roll is cancelled
// and Drive returns at once (saves already started run on in the servers).
// It returns the roll as it ended.
func Drive(ctx context.Context, f *Fleet, top source.Topology, conns []Connected, cfg DriveConfig) (*roll.Roll, error) {
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
		if r.State() == roll.Held {
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
	d    *roll.Driver
	cfg  DriveConfig
	q    *eventQueue
	ctx  context.Context
	end  context.CancelFunc
	wg   sync.WaitGroup
	next []source.NodeID // what f was told to expect
}

func newDrive(f *Fleet, top source.Topology, cfg DriveConfig) *drive {
	ctx, end := context.WithCancel(context.Background())
	return &drive{f: f, d: roll.NewDriver(top, cfg.Roll), cfg: cfg, q: newEventQueue(), ctx: ctx, end: end}
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
func (dr *drive) send(acts []roll.Action) {
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
func (dr *drive) expectNext(r *roll.Roll) {
	if n := r.Next(); !slices.Equal(n, dr.next) {
		dr.next = n
		dr.f.Expect(roll.ExpectNext, n...)
	}
}

// rollErr is what a roll that is over ends Drive with: nil when it
// finished, the node and the server's words when it failed, ErrHeld when
// the memory check held it.
func rollErr(r *roll.Roll) error {
	switch p := r.Progress(); {
	case p.State == roll.Failed:
		return errors.New(p.Err)
	case p.State == roll.Cancelled:
		if _, held := roll.HeldAt(r); held {
			return ErrHeld
		}
		return errors.New("cancelled")
	}
	return nil
}

func (c DriveConfig) progress(d *roll.Driver) {
	if c.Progress != nil && d.Roll() != nil {
		c.Progress(d.Roll(), d.Status())
	}
}

// allKnown reports whether every node of st is sampled or known to be
// down: what a roll is planned on.
func allKnown(st *roll.Status) bool {
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
