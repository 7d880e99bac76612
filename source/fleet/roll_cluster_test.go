package fleet

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/watch"
)

// driver plays the UI's part for a rolling save on a real fleet: a
// roll.Driver fed every event, whose actions are sent through the fleet, each
// on a goroutine of its own like a tea.Cmd.
type driver struct {
	f  *Fleet
	mu sync.Mutex
	d  *roll.Driver
	st *roll.Status
}

func newDriver(t *testing.T, f *Fleet, top source.Topology) *driver {
	d := &driver{f: f, d: roll.NewDriver(top, roll.Config{})}
	d.st = d.d.Status()
	runFleetTo(t, f, d.emit)
	return d
}

func (d *driver) emit(ev source.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.send(d.d.Observe(ev))
}

func (d *driver) send(as []roll.Action) {
	for _, a := range as {
		go d.f.Do(context.Background(), a.Node, a.Args...)
	}
}

// plan plans a roll (of the default configuration) on what the status
// knows now, as the confirmation line does, without starting it.
func (d *driver) plan() []roll.Step {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.d.Plan()
}

// start plans a roll and starts it.
func (d *driver) start() []roll.Step {
	steps := d.plan()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.send(d.d.Start())
	return steps
}

func (d *driver) progress() roll.Progress {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.d.Roll().Progress()
}

// ready reports whether every node of the status is connected and sampled.
func (d *driver) ready() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.st.Nodes() {
		if !n.Connected || n.Sample == nil {
			return false
		}
	}
	return true
}

// rollCluster is a real 3x1 cluster holding 3,000 keys, saving each key
// with a delay of delayMicros, and an ACL user "roller" allowed everything
// on every node; seed is its first node, logged in as roller.
func rollCluster(t *testing.T, delayMicros string) (*servertest.Cluster, source.Endpoint) {
	t.Helper()
	c := servertest.StartCluster(t, 3, 1)
	c.Fill(3000, 100)
	c.DoAll("CONFIG", "SET", "rdb-key-save-delay", delayMicros)
	c.DoAll("ACL", "SETUSER", "roller", "on", ">rollpass", "+@all", "~*", "&*")
	seed := sourcetest.Endpoint(t, c.Nodes()[0].Addr)
	seed.Username, seed.Password = "roller", "rollpass"
	return c, seed
}

// TestRollOnARealCluster: on a real 3x1 cluster, the rolling save saves
// exactly one node per shard, a replica each, never two at once (every
// node's rdb_bgsave_in_progress polled throughout); it stops with the
// node's own error when one refuses (an ACL user without +bgsave there),
// and when the node saving dies.
func TestRollOnARealCluster(t *testing.T) {
	noLeaks(t)
	// About 1,000 keys a shard at 400 µs each: saves of ~0.4 s, long
	// enough to be seen running by the sampler and the poller.
	c, seed := rollCluster(t, "400")
	ctx := context.Background()
	f := NewCluster(seed, Config{Watch: watch.Config{Interval: 50 * time.Millisecond}})
	top, err := f.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, f, top)
	servertest.WaitFor(t, 10*time.Second, "every node sampled", d.ready)

	runRoll := func(t *testing.T) ([]roll.Step, roll.Progress, *servertest.SaveWatcher, map[string]string) {
		t.Helper()
		before := c.RDBSaves(t)
		p := c.WatchSaves(t)
		steps := d.start()
		servertest.WaitFor(t, 30*time.Second, "the roll to end", func() bool { return d.progress().State.Over() })
		p.Stop()
		after := c.RDBSaves(t)
		saved := map[string]string{}
		for id, v := range after {
			if before[id] != v {
				saved[id] = before[id] + " -> " + v
			}
		}
		return steps, d.progress(), p, saved
	}

	t.Run("one replica per shard, one at a time", func(t *testing.T) {
		steps, prog, p, saved := runRoll(t)
		if prog.State != roll.Done || prog.Done != 3 || prog.Total != 3 {
			t.Fatalf("roll ended %+v", prog)
		}
		shards := map[int]bool{}
		for _, st := range steps {
			shards[st.Shard] = true
			if st.Node.Role != source.RoleReplica {
				t.Errorf("%s (%s) planned: not a replica", st.Node.Addr, st.Node.Role)
			}
			if _, ok := saved[string(st.Node.ID)]; !ok || !p.Seen(st.Node.Addr) {
				t.Errorf("%s: rdb_saves %q, seen saving %v", st.Node.Addr, saved[string(st.Node.ID)], p.Seen(st.Node.Addr))
			}
		}
		if len(shards) != 3 || len(saved) != 3 {
			t.Errorf("saved %v on shards %v, want one node of each of 3 shards", saved, shards)
		}
		if n := p.MaxAtOnce(); n != 1 {
			t.Errorf("at most %d nodes saving at once (%v), want 1", n, p.Pairs())
		}
	})

	t.Run("stops at a refusal", func(t *testing.T) {
		second := c.Node(string(d.plan()[1].Node.ID))
		if err := c.Client(second).Do(ctx, "ACL", "SETUSER", "roller", "-bgsave").Err(); err != nil {
			t.Fatal(err)
		}
		defer c.Client(second).Do(ctx, "ACL", "SETUSER", "roller", "+bgsave")
		steps, prog, _, saved := runRoll(t)
		if prog.State != roll.Failed || !strings.Contains(prog.Err, "BGSAVE on "+second.Addr+": NOPERM") {
			t.Fatalf("roll ended %+v, want a NOPERM from %s", prog, second.Addr)
		}
		if len(saved) != 1 || saved[string(steps[0].Node.ID)] == "" {
			t.Errorf("saved %v, want only the first node %s", saved, steps[0].Node.Addr)
		}
	})

	t.Run("stops when the node saving dies", func(t *testing.T) {
		before := c.RDBSaves(t)
		p := c.WatchSaves(t)
		steps := d.start()
		first := c.Node(string(steps[0].Node.ID))
		servertest.WaitFor(t, 10*time.Second, first.Addr+" saving", func() bool { return p.Seen(first.Addr) })
		c.Kill(first)
		servertest.WaitFor(t, 10*time.Second, "the roll to end", func() bool { return d.progress().State.Over() })
		p.Stop()
		prog := d.progress()
		if prog.State != roll.Failed || !strings.HasPrefix(prog.Err, first.Addr+" went down during its save: ") {
			t.Fatalf("roll ended %+v, want %s gone down", prog, first.Addr)
		}
		after := c.RDBSaves(t)
		for _, st := range steps[1:] {
			if after[string(st.Node.ID)] != before[string(st.Node.ID)] {
				t.Errorf("%s saved after the roll stopped", st.Node.Addr)
			}
		}
	})
}

// TestDriveOnARealCluster: the headless rolling save (Drive, what vkwatch
// save --cluster --rolling runs) on a real 3x1 cluster saves one replica
// per shard, one at a time, telling its progress as it goes; with an ACL
// user lacking +bgsave on the second node it stops there with the
// server's words, having saved the first only.
func TestDriveOnARealCluster(t *testing.T) {
	noLeaks(t)
	c, seed := rollCluster(t, "300")
	ctx := context.Background()
	// fine: the nodes seen probed at the fine interval while their step
	// still waited (the roll's next node, issue 21).
	var fine map[source.NodeID]bool
	drive := func(t *testing.T) (*roll.Roll, error, []string, *servertest.SaveWatcher, map[string]string) {
		t.Helper()
		// A small PING budget, so that the nodes out of attention are
		// probed far more coarsely than 2 ms (at the default budget six
		// nodes would all get the fine interval).
		f := NewCluster(seed, Config{Watch: watch.Config{Interval: 50 * time.Millisecond}, PingBudget: 100})
		defer f.Close()
		top, err := f.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns := f.Connect(ctx)
		before := c.RDBSaves(t)
		p := c.WatchSaves(t)
		var seen []string // each step's state as roll.Progress told it, when it changed
		last := map[source.NodeID]roll.StepState{}
		fine = map[source.NodeID]bool{}
		r, err := Drive(ctx, f, top, conns, DriveConfig{Emit: func(ev source.Event) {
			if st, ok := last[ev.Node]; ok && st == roll.StepWaiting && ev.Kind == source.EventSample && ev.Sample.Ping.Interval == MinPingInterval {
				fine[ev.Node] = true
			}
		}, Progress: func(r *roll.Roll, _ *roll.Status) {
			for _, st := range r.Steps() {
				if s, ok := last[st.Node.ID]; !ok || s != st.State {
					last[st.Node.ID] = st.State
					seen = append(seen, st.Node.Addr+" "+st.State.String())
				}
			}
		}})
		p.Stop()
		saved := map[string]string{}
		for id, v := range c.RDBSaves(t) {
			if before[id] != v {
				saved[id] = before[id] + " -> " + v
			}
		}
		return r, err, seen, p, saved
	}

	t.Run("one replica per shard, one at a time", func(t *testing.T) {
		r, err, seen, p, saved := drive(t)
		if err != nil || r.State() != roll.Done {
			t.Fatalf("Drive: %v, %s", err, r.State())
		}
		for _, st := range r.Steps() {
			if st.Node.Role != source.RoleReplica || st.State != roll.StepDone || st.Report == nil || !p.Seen(st.Node.Addr) {
				t.Errorf("%s (%s): %s, report %v, seen saving %v", st.Node.Addr, st.Node.Role, st.State, st.Report != nil, p.Seen(st.Node.Addr))
			}
			if !slices.Contains(seen, st.Node.Addr+" saving") && !slices.Contains(seen, st.Node.Addr+" sent") {
				t.Errorf("progress never told %s going: %v", st.Node.Addr, seen)
			}
		}
		// The nodes after the first wait a whole save each: meanwhile,
		// as the roll's next, they are probed at 2 ms.
		for _, st := range r.Steps()[1:] {
			if !fine[st.Node.ID] {
				t.Errorf("%s, next in the roll, never probed at %s before its save", st.Node.Addr, MinPingInterval)
			}
		}
		if len(saved) != 3 || p.MaxAtOnce() != 1 {
			t.Errorf("saved %v, at most %d at once (%v)", saved, p.MaxAtOnce(), p.Pairs())
		}
	})

	t.Run("stops at the first refusal", func(t *testing.T) {
		// Plan as Drive will: the first node of the plan refuses.
		f0 := NewCluster(seed, Config{})
		defer f0.Close()
		top, err := f0.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		second := c.Node(string(roll.OnePerShard(top)[1].ID))
		if err := c.Client(second).Do(ctx, "ACL", "SETUSER", "roller", "-bgsave").Err(); err != nil {
			t.Fatal(err)
		}
		defer c.Client(second).Do(ctx, "ACL", "SETUSER", "roller", "+bgsave")
		r, err, _, _, saved := drive(t)
		if r.State() != roll.Failed || err == nil || !strings.Contains(err.Error(), "BGSAVE on "+second.Addr+": NOPERM") {
			t.Fatalf("Drive: %v, %s", err, r.State())
		}
		steps := r.Steps()
		if len(saved) != 1 || saved[string(steps[0].Node.ID)] == "" || steps[2].State != roll.StepCancelled {
			t.Errorf("saved %v, steps %v %v %v", saved, steps[0].State, steps[1].State, steps[2].State)
		}
	})
}
