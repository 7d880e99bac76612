// Package roll plans and follows a rolling save across a fleet: Status
// (the fleet's nodes as the latest events left them), Roll (the plan and
// its steps) and Driver (the two fed in order). It is pure and does no
// I/O: it returns the commands to send and learns their outcome from the
// events that follow. It imports no client (neither go-redis nor
// source/watch), so the UI can hold one without linking the network code;
// source/fleet.Drive runs one headless over real connections.
package roll

import (
	"fmt"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/risk"
)

// The rolling save: one save per shard, across a fleet, without forking
// the wrong node at the wrong moment. A Roll is pure logic, deterministic
// over the events it is given: it decides, it never sends. The UI holds
// one, feeds it every event from Update (after its Status), and sends the
// Actions it returns as tea.Cmds (fleet.Do); their answers come back as
// events. The rules:
//
//   - one node per shard: a replica when the shard has a healthy one (so
//     that primaries are not forked), else its primary;
//   - at most MaxParallel saves at once in the fleet (default 1), counting
//     saves the nodes started on their own;
//   - never two at once on one host (same IP address; on a local test
//     cluster every node is 127.0.0.1, so the roll goes one by one): a
//     save, AOF rewrite or load running on any node of a host, whoever
//     started it (a replica's full sync), makes the roll wait for it;
//   - the memory check before each node (source/risk, from the node's
//     latest sample and save report): a fork that would exceed a limit
//     holds the roll until Confirm (send anyway) or Cancel;
//   - the first refused command, failed save or node lost during its save
//     stops the roll, saying which node and the server's own words;
//   - Cancel drops the nodes not started yet; the saves running finish.

// Config tunes a Roll.
type Config struct {
	// MaxParallel is how many saves may run at once in the fleet; default 1.
	MaxParallel int
	// Force sends every node without holding at the memory check (the
	// verdict is still kept in the step, for the record).
	Force bool
	// IgnoreBusy sends each node's command even while saves run in the
	// fleet or on its host: the server decides, and a refusal ("ERR
	// Background save already in progress") stops the roll with its
	// words. For a save of one server asked for by name (vkwatch save
	// ADDR); a rolling save waits instead.
	IgnoreBusy bool
	// Command is what is sent to each node; default BGSAVE.
	Command []string
}

// State is where a roll stands.
type State int

const (
	Planned    State = iota // planned, not started
	Running                 // saving node by node
	Held                    // a memory warning waits for Confirm or Cancel
	Cancelling              // cancelled; saves that had started still run
	Done                    // every node saved
	Failed                  // stopped at an error (Progress.Err)
	Cancelled               // cancelled, nothing running any more
)

func (s State) String() string {
	return [...]string{"planned", "running", "held", "cancelling", "done", "failed", "cancelled"}[s]
}

// Over reports whether the roll has ended.
func (s State) Over() bool { return s >= Done }

// StepState is where one node of the roll stands.
type StepState int

const (
	StepWaiting   StepState = iota // not started
	StepSent                       // command sent, no answer yet
	StepSaving                     // accepted, the save runs
	StepDone                       // saved
	StepFailed                     // refused, failed or lost
	StepCancelled                  // never started: the roll was cancelled or stopped
)

func (s StepState) String() string {
	return [...]string{"waiting", "sent", "saving", "done", "failed", "cancelled"}[s]
}

// active reports whether the step's command is out and its save not over
// (Sent or Saving).
func (s StepState) active() bool { return s == StepSent || s == StepSaving }

// Step is one node of the roll.
type Step struct {
	Node  source.TopologyNode
	Shard int // index of the shard in the topology
	Host  string
	State StepState
	// Sent is when the command went out, Ended when the save's report
	// came (offsets of the run clock).
	Sent, Ended time.Duration
	Report      *source.SaveReport // the save's report, once done
	Err         string             // why it failed
	// Risk is the memory check's verdict on the node's fork, as it stood
	// when the step was about to be sent (Level Unknown before).
	Risk risk.Fork
}

// Hold is a node the memory check holds the roll before, and why.
type Hold struct {
	Node source.TopologyNode
	Risk risk.Fork
}

// Action is a command the roll wants sent: the UI sends Args to Node (and
// tells nothing back but the events that follow).
type Action struct {
	Node source.NodeID
	Addr string
	Args []string
}

// Progress is the roll's state for the screen.
type Progress struct {
	State   State
	Done    int // nodes saved
	Total   int // nodes planned
	Running []source.NodeID
	// ETA is the time left, from the mean duration of the saves done so
	// far (send to report) times the nodes left, per parallel slot;
	// absent before the first save is done.
	ETA source.Opt[time.Duration]
	// Err names the node and what stopped the roll (Failed).
	Err string
	// Held is the node whose memory check holds the roll (state Held), nil
	// otherwise: the caller writes the warning from its numbers.
	Held *Hold
	// Waiting says what the roll waits for when it can start nothing
	// ("a save running on 10.0.0.7:6380 (not vkwatch's)"), empty otherwise.
	Waiting string
}

// Roll is one rolling save. Create it with New, Start it, feed it
// every event with Observe; call from one goroutine (bubbletea's Update).
type Roll struct {
	cfg    Config
	status *Status
	steps  []Step
	state  State
	err    string
	held   int  // index of the step a memory warning holds, -1 when none
	force  bool // Confirm: send the held step anyway
	wait   string
	now    time.Duration
}

// New plans a rolling save of the fleet status knows: one node per
// shard, in shard order. The status must be the one the caller feeds the
// same events to, first.
func New(status *Status, cfg Config) *Roll {
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 1
	}
	if len(cfg.Command) == 0 {
		cfg.Command = []string{"BGSAVE"}
	}
	r := &Roll{cfg: cfg, status: status, held: -1, now: status.Now()}
	for _, n := range perShard(status) {
		r.steps = append(r.steps, Step{Node: n.Node, Shard: n.Shard, Host: n.Host})
	}
	return r
}

// perShard returns the node to save in each shard of the status's
// topology (pick's choice), in shard order; a shard without nodes has
// none.
func perShard(status *Status) []NodeStatus {
	byShard := map[int][]NodeStatus{}
	for _, n := range status.Nodes() {
		byShard[n.Shard] = append(byShard[n.Shard], n)
	}
	var out []NodeStatus
	for i := range status.Topology().Shards {
		if n, ok := pick(byShard[i]); ok {
			out = append(out, n)
		}
	}
	return out
}

// pick chooses the node of a shard to save: a healthy replica (online
// before loading, connected before not, then by address), else the
// primary.
func pick(nodes []NodeStatus) (NodeStatus, bool) {
	best, found := NodeStatus{}, false
	score := func(n NodeStatus) int {
		s := 0
		if n.Node.Health == source.HealthOnline || n.Node.Health == "" {
			s += 2
		}
		if n.Connected {
			s++
		}
		return s
	}
	for _, n := range nodes {
		if n.Node.Role != source.RoleReplica || n.Node.Health == source.HealthFailed {
			continue
		}
		if !found || score(n) > score(best) || score(n) == score(best) && n.Node.Addr < best.Node.Addr {
			best, found = n, true
		}
	}
	if found {
		return best, true
	}
	for _, n := range nodes {
		if n.Node.Role == source.RolePrimary || n.Node.Role == "" {
			return n, true
		}
	}
	if len(nodes) > 0 {
		return nodes[0], true
	}
	return NodeStatus{}, false
}

// Steps returns the nodes of the roll and where each stands, in order.
func (r *Roll) Steps() []Step { return append([]Step(nil), r.steps...) }

// State returns where the roll stands.
func (r *Roll) State() State { return r.state }

// Start starts the roll and returns the first commands to send.
func (r *Roll) Start() []Action {
	if r.state != Planned {
		return nil
	}
	r.state = Running
	if len(r.steps) == 0 {
		r.state = Done
		return nil
	}
	return r.advance()
}

// Confirm sends the node a memory warning holds anyway, and goes on.
func (r *Roll) Confirm() []Action {
	if r.state != Held {
		return nil
	}
	r.state, r.force = Running, true
	return r.advance()
}

// Cancel drops the nodes not started yet. Saves already running finish
// (and are reported); the roll is cancelled once none runs.
func (r *Roll) Cancel() {
	if r.state.Over() {
		return
	}
	for i := range r.steps {
		if r.steps[i].State == StepWaiting {
			r.steps[i].State = StepCancelled
		}
	}
	r.held, r.wait = -1, ""
	r.state = Cancelling
	r.settle()
}

// Observe takes the next event (already given to the Status) and returns
// the commands to send now.
func (r *Roll) Observe(ev source.Event) []Action {
	if ev.Offset > r.now {
		r.now = ev.Offset
	}
	if r.state == Planned || r.state.Over() {
		return nil
	}
	if i := r.stepOf(ev.Node); i >= 0 {
		r.follow(i, ev)
	}
	if r.state.Over() || r.state == Cancelling {
		r.settle()
		return nil
	}
	return r.advance()
}

// stepOf is the index of node's step, -1 when it has none.
func (r *Roll) stepOf(node source.NodeID) int {
	for i := range r.steps {
		if r.steps[i].Node.ID == node {
			return i
		}
	}
	return -1
}

// follow applies an event about a step's node.
func (r *Roll) follow(i int, ev source.Event) {
	st := &r.steps[i]
	if !st.State.active() {
		return
	}
	name := st.Node.Addr
	switch ev.Kind {
	case source.EventCommand:
		c := ev.Command
		if c == nil || c.Command != strings.Join(r.cfg.Command, " ") || c.Done < st.Sent {
			return
		}
		if !c.OK() {
			r.fail(i, fmt.Sprintf("%s on %s: %s", c.Command, name, c.Err))
			return
		}
		st.State = StepSaving
	case source.EventSaveEnded:
		rep := ev.Report
		if rep == nil || rep.Ended < st.Sent || rep.Kind == source.SaveAOF {
			return
		}
		st.Ended, st.Report = ev.Offset, rep
		if rep.Status != "ok" {
			r.fail(i, fmt.Sprintf("the save on %s ended with status %s", name, rep.Status))
			return
		}
		st.State = StepDone
	case source.EventDisconnected:
		if ev.Stalled {
			return // alive; the save goes on and shows when it answers
		}
		r.fail(i, fmt.Sprintf("%s went down during its save: %s", name, ev.Err))
	}
}

// fail stops the roll at step i.
func (r *Roll) fail(i int, why string) {
	r.steps[i].State, r.steps[i].Err = StepFailed, why
	if r.err == "" {
		r.err = why
	}
	for j := range r.steps {
		if r.steps[j].State == StepWaiting {
			r.steps[j].State = StepCancelled
		}
	}
	r.held = -1
	r.state = Failed
}

// settle ends a cancelled roll once nothing of it runs.
func (r *Roll) settle() {
	if r.state != Cancelling {
		return
	}
	for _, st := range r.steps {
		if st.State.active() {
			return
		}
	}
	r.state = Cancelled
}

// advance starts every waiting step that may start now, in order, and
// returns their commands.
func (r *Roll) advance() []Action {
	if r.state != Running {
		return nil
	}
	r.wait = ""
	running, busyHosts, why := r.load()
	var out []Action
	left := 0
	for i := range r.steps {
		st := &r.steps[i]
		if st.State != StepWaiting {
			continue
		}
		left++
		if running >= r.cfg.MaxParallel {
			if r.wait == "" {
				r.wait = why
			}
			break
		}
		if b, ok := busyHosts[st.Host]; ok {
			if r.wait == "" {
				r.wait = b
			}
			continue
		}
		n, _ := r.status.Node(st.Node.ID)
		if !n.Connected {
			err := n.Err
			if err == "" {
				err = "not connected"
			}
			// Nothing decided in this round goes out: the roll stops here.
			for _, a := range out {
				r.steps[r.stepOf(a.Node)].State = StepWaiting
			}
			r.fail(i, fmt.Sprintf("%s is down: %s", st.Node.Addr, err))
			return nil
		}
		st.Risk = riskOf(n)
		if st.Risk.Exceeds() && !r.cfg.Force && !(r.force && r.held == i) {
			r.state, r.held = Held, i
			return out
		}
		r.force, r.held = false, -1
		st.State, st.Sent = StepSent, r.now
		out = append(out, Action{Node: st.Node.ID, Addr: st.Node.Addr, Args: append([]string(nil), r.cfg.Command...)})
		running++
		busyHosts[st.Host] = "a save of vkwatch's on " + st.Node.Addr
	}
	if left == 0 {
		r.finish()
	}
	return out
}

// Next is the node the roll starts next: its first waiting step, while
// the roll is planned, running or held; none once it is over or
// cancelling. It is what the fleet probes finely before it forks
// (source/fleet's Fleet.Expect), so a fork pause there is not missed.
func (r *Roll) Next() []source.NodeID {
	switch r.state {
	case Planned, Running, Held:
	default:
		return nil
	}
	for _, st := range r.steps {
		if st.State == StepWaiting {
			return []source.NodeID{st.Node.ID}
		}
	}
	return nil
}

// finish ends a roll whose steps have all left the waiting state.
func (r *Roll) finish() {
	for _, st := range r.steps {
		if st.State.active() {
			return
		}
	}
	r.state = Done
}

// load counts the saves running in the fleet (the roll's, and those the
// nodes run on their own) and the hosts they run on, each with what runs
// there; why says what the first of them is.
func (r *Roll) load() (running int, hosts map[string]string, why string) {
	hosts = map[string]string{}
	ours := map[source.NodeID]bool{}
	for _, st := range r.steps {
		if st.State.active() {
			ours[st.Node.ID] = true
			running++
			b := "a save of vkwatch's on " + st.Node.Addr
			hosts[st.Host] = b
			if why == "" {
				why = b
			}
		}
	}
	for _, n := range r.status.Nodes() {
		if r.cfg.IgnoreBusy {
			break
		}
		if ours[n.Node.ID] || !n.Busy() {
			continue
		}
		running++
		b := fmt.Sprintf("%s on %s (not vkwatch's)", busyWhat(n), n.Node.Addr)
		if _, ok := hosts[n.Host]; !ok {
			hosts[n.Host] = b
		}
		if why == "" {
			why = b
		}
	}
	return running, hosts, why
}

// busyWhat names what keeps a busy node busy.
func busyWhat(n NodeStatus) string {
	s := n.Sample
	switch {
	case s.Info.Loading.V == 1:
		return "a load"
	case s.Save != nil && s.Save.Trigger.Kind == source.TriggerReplica:
		return "a replica's full sync"
	case s.Save != nil && s.Save.Kind == source.SaveAOF, s.Info.AOFRewriteInProgress.V == 1:
		return "an AOF rewrite"
	}
	return "a save"
}

// Progress returns where the roll stands.
func (r *Roll) Progress() Progress {
	p := Progress{State: r.state, Total: len(r.steps), Err: r.err, Waiting: r.wait}
	if r.state == Held && r.held >= 0 {
		st := r.steps[r.held]
		p.Held = &Hold{Node: st.Node, Risk: st.Risk}
	}
	var took time.Duration
	left := 0
	hosts := map[string]bool{}
	for _, st := range r.steps {
		switch st.State {
		case StepDone:
			p.Done++
			took += st.Ended - st.Sent
		case StepSent, StepSaving:
			p.Running = append(p.Running, st.Node.ID)
			left++
			hosts[st.Host] = true
		case StepWaiting:
			left++
			hosts[st.Host] = true
		}
	}
	if p.Done > 0 && !r.state.Over() {
		// As many at once as both the limit and the hosts left allow.
		slots := max(min(r.cfg.MaxParallel, len(hosts)), 1)
		mean := took / time.Duration(p.Done)
		p.ETA = source.Some(mean * time.Duration((left+slots-1)/slots))
	}
	return p
}

// riskOf is the memory check of a node's fork: what source/risk says of
// its latest sample and save report, with its forecast copy-on-write.
func riskOf(n NodeStatus) risk.Fork {
	return risk.Assess(risk.Input{Sample: n.Sample, Last: n.Report, Forecast: forecast.RiskFigure(n.Forecast)})
}

// OnePerShard returns the node a rolling save would save in each shard of
// top, judging by the topology alone (a replica not failed, else the
// primary), in shard order: what bench --per-shard runs on.
func OnePerShard(top source.Topology) []source.TopologyNode {
	var out []source.TopologyNode
	for _, n := range perShard(NewStatus(top)) {
		out = append(out, n.Node)
	}
	return out
}
