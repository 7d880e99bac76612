package roll

import (
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
)

// Driver holds a rolling save and what it is planned from: a Status and,
// once planned, a Roll, fed every event in the order the planner wants
// (the status first). It does no I/O: it returns the Actions to send. The
// UI holds one in its fleet view, calls it from Update and sends the
// Actions as tea.Cmds; fleet.Drive holds one on a goroutine of its own and
// sends them itself. Not safe for concurrent use.
type Driver struct {
	status  *Status
	cfg     Config
	roll    *Roll
	started time.Duration // the run clock when the roll started
}

// NewDriver returns a driver for the fleet of top, whose rolls use cfg,
// with a status of its own (NewStatus): headless.
func NewDriver(top source.Topology, cfg Config) *Driver {
	return &Driver{status: NewStatus(top), cfg: cfg}
}

// NewDriverOf returns a driver whose status reads each node's state from
// hist (NewStatusOf): the caller adds every event to hist before Observe.
func NewDriverOf(top source.Topology, cfg Config, hist *store.Store) *Driver {
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
func (d *Driver) Config() Config { return d.cfg }

// Roll is the roll planned, running or over; nil when none.
func (d *Driver) Roll() *Roll { return d.roll }

// Plan plans a roll on what the status knows now, in place of any roll
// that is not running, and returns its steps; nothing is sent until Start.
func (d *Driver) Plan() []Step {
	if d.Active() {
		return d.roll.Steps()
	}
	d.roll = New(d.status, d.cfg)
	return d.roll.Steps()
}

// Planned reports whether a roll waits to be started.
func (d *Driver) Planned() bool { return d.roll != nil && d.roll.State() == Planned }

// Active reports whether a roll runs (or is held, or finishes after a
// cancel).
func (d *Driver) Active() bool {
	return d.roll != nil && d.roll.State() != Planned && !d.roll.State().Over()
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

// ExpectNext is why the roll's next node is probed finely, as the
// header says it.
const ExpectNext = "next in the roll"

// HeldAt returns the step of a roll fleet.Drive stopped at the memory check:
// the first step left unsent whose verdict exceeds a limit.
func HeldAt(r *Roll) (Step, bool) {
	for _, st := range r.Steps() {
		if st.State == StepCancelled && st.Risk.Exceeds() {
			return st, true
		}
	}
	return Step{}, false
}
