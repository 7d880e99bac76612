package roll

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/risk"
)

// sim drives a Status and a Roll with synthetic events, as the UI does.
type sim struct {
	t   *testing.T
	st  *Status
	r   *Roll
	now time.Duration
	seq uint64 // samples are numbered, as a watcher numbers them
}

func tnode(id, role, ip, primary string) source.TopologyNode {
	return source.TopologyNode{ID: source.NodeID(id), Addr: ip + ":" + id, IP: ip, Role: role,
		Primary: source.NodeID(primary), Health: source.HealthOnline}
}

// threeShards is a cluster of three shards, a primary and a replica each,
// all on one host unless hosts says otherwise (one IP per node, in order
// p1 r1 p2 r2 p3 r3).
func threeShards(hosts ...string) source.Topology {
	ip := func(i int) string {
		if i < len(hosts) {
			return hosts[i]
		}
		return "10.0.0.1"
	}
	var top source.Topology
	for s := 1; s <= 3; s++ {
		p, r := "p"+string(rune('0'+s)), "r"+string(rune('0'+s))
		top.Shards = append(top.Shards, source.Shard{Nodes: []source.TopologyNode{
			tnode(p, source.RolePrimary, ip(2*s-2), ""), tnode(r, source.RoleReplica, ip(2*s-1), p)}})
	}
	top.Cluster = true
	return top
}

func newSim(t *testing.T, top source.Topology, cfg Config) *sim {
	s := &sim{t: t, st: NewStatus(top)}
	for _, n := range top.Nodes() {
		s.idle(string(n.ID))
	}
	s.r = New(s.st, cfg)
	return s
}

// feed gives one event to the status, then the roll, as the UI must.
func (s *sim) feed(ev source.Event) []Action {
	s.now += 100 * time.Millisecond
	ev.Offset = s.now
	s.st.Observe(ev)
	if s.r == nil {
		return nil
	}
	return s.r.Observe(ev)
}

func (s *sim) sample(id string, in source.Info, save *source.SaveProgress) []Action {
	s.seq++
	return s.feed(source.Event{Node: source.NodeID(id), Kind: source.EventSample,
		Sample: &source.Sample{Seq: s.seq, Offset: s.now, Info: in, Save: save}})
}

func (s *sim) idle(id string) []Action {
	return s.sample(id, source.Info{RDBInProgress: source.Some[int64](0)}, nil)
}

func (s *sim) saving(id string, trigger source.TriggerKind) []Action {
	return s.sample(id, source.Info{RDBInProgress: source.Some[int64](1)},
		&source.SaveProgress{Kind: source.SaveFork, Trigger: source.Trigger{Kind: trigger}})
}

func (s *sim) answer(id, errText string) []Action {
	c := &source.CommandResult{Command: "BGSAVE", Sent: s.now, Done: s.now + 1, Err: errText}
	if errText == "" {
		c.Reply = "Background saving started"
	}
	return s.feed(source.Event{Node: source.NodeID(id), Kind: source.EventCommand, Command: c})
}

func (s *sim) ended(id, status string) []Action {
	s.idle(id)
	return s.feed(source.Event{Node: source.NodeID(id), Kind: source.EventSaveEnded,
		Report: &source.SaveReport{Node: source.NodeID(id), Kind: source.SaveFork, Status: status, Ended: s.now + 100*time.Millisecond}})
}

// save runs one node's save to its end: accepted, running, ended ok.
func (s *sim) save(id string) []Action {
	s.answer(id, "")
	s.saving(id, source.TriggerUser)
	s.advance(time.Second)
	return s.ended(id, "ok")
}

func (s *sim) advance(d time.Duration) { s.now += d }

func nodesOf(as []Action) []string {
	var out []string
	for _, a := range as {
		out = append(out, string(a.Node))
		if !reflect.DeepEqual(a.Args, []string{"BGSAVE"}) {
			panic("unexpected command " + strings.Join(a.Args, " "))
		}
	}
	return out
}

func want(t *testing.T, what string, got []Action, nodes ...string) {
	t.Helper()
	if g := nodesOf(got); !reflect.DeepEqual(g, nodes) && (len(g) != 0 || len(nodes) != 0) {
		t.Fatalf("%s: sends to %v, want %v", what, g, nodes)
	}
}

func TestRollPlanPicksAReplicaPerShard(t *testing.T) {
	top := threeShards()
	// Shard 2's replica has failed: its primary is saved instead. Shard 3
	// has a second replica, healthier than the first (loading).
	top.Shards[1].Nodes[1].Health = source.HealthFailed
	top.Shards[2].Nodes[1].Health = source.HealthLoading
	top.Shards[2].Nodes = append(top.Shards[2].Nodes, tnode("r3b", source.RoleReplica, "10.0.0.1", "p3"))
	s := newSim(t, top, Config{})
	var got []string
	for _, st := range s.r.Steps() {
		got = append(got, string(st.Node.ID))
		if st.State != StepWaiting {
			t.Errorf("%s planned as %s", st.Node.ID, st.State)
		}
	}
	if !reflect.DeepEqual(got, []string{"r1", "p2", "r3b"}) {
		t.Errorf("plan %v, want r1 p2 r3b", got)
	}
	if p := s.r.Progress(); p.State != Planned || p.Total != 3 || p.Done != 0 {
		t.Errorf("progress %+v", p)
	}
	// A list: every server is its own shard.
	l := New(NewStatus(source.Topology{Shards: []source.Shard{{Nodes: []source.TopologyNode{{ID: "a"}}}, {Nodes: []source.TopologyNode{{ID: "b"}}}}}), Config{})
	if n := len(l.Steps()); n != 2 {
		t.Errorf("a list of 2: %d steps", n)
	}
}

// One host: one save at a time, shard by shard, to the end; progress and
// ETA from the saves done.
func TestRollOneHostOneAtATime(t *testing.T) {
	s := newSim(t, threeShards(), Config{MaxParallel: 3})
	want(t, "start", s.r.Start(), "r1")
	want(t, "r1 accepted", s.answer("r1", ""))
	want(t, "r1 saving", s.saving("r1", source.TriggerUser))
	if p := s.r.Progress(); p.Waiting == "" || !strings.Contains(p.Waiting, "10.0.0.1:r1") || p.ETA.OK {
		t.Errorf("while r1 saves: %+v", p)
	}
	s.advance(2 * time.Second)
	want(t, "r1 ended", s.ended("r1", "ok"), "r2")
	p := s.r.Progress()
	if p.Done != 1 || !p.ETA.OK || p.ETA.V < 4*time.Second || p.ETA.V > 5*time.Second {
		t.Errorf("after one 2 s save: %+v, want done 1 and an ETA of about 2 x 2.2 s", p)
	}
	want(t, "r2 saved", s.save("r2"), "r3")
	want(t, "r3 saved", s.save("r3"))
	if p := s.r.Progress(); p.State != Done || p.Done != 3 || len(p.Running) != 0 {
		t.Errorf("end: %+v", p)
	}
	for _, st := range s.r.Steps() {
		if st.State != StepDone || st.Report == nil {
			t.Errorf("%s: %s, report %v", st.Node.ID, st.State, st.Report)
		}
	}
}

// Hosts apart: --max-parallel-saves 2 saves two at once, never two on one
// host; the default is one.
func TestRollParallelAcrossHosts(t *testing.T) {
	// r1 and r2 share a host; r3 has its own.
	hosts := []string{"10.0.0.1", "10.0.0.5", "10.0.0.2", "10.0.0.5", "10.0.0.3", "10.0.0.6"}
	s := newSim(t, threeShards(hosts...), Config{MaxParallel: 2})
	want(t, "start", s.r.Start(), "r1", "r3")
	want(t, "r3 saved", s.save("r3"))
	want(t, "r1 saved", s.save("r1"), "r2")

	s = newSim(t, threeShards(hosts...), Config{})
	want(t, "start, default parallel", s.r.Start(), "r1")
	want(t, "r1 saved", s.save("r1"), "r2")
}

// A save a node runs on its own (a replica's full sync forks its primary)
// makes the roll wait, on that host and in the parallel count.
func TestRollWaitsForAForeignSave(t *testing.T) {
	s := newSim(t, threeShards(), Config{MaxParallel: 2})
	s.saving("p1", source.TriggerReplica)
	want(t, "start during p1's full sync", s.r.Start())
	if p := s.r.Progress(); !strings.Contains(p.Waiting, "a replica's full sync on 10.0.0.1:p1") {
		t.Errorf("waiting for %q", p.Waiting)
	}
	want(t, "p1 still syncing", s.saving("p1", source.TriggerReplica))
	want(t, "p1 done", s.idle("p1"), "r1")
	// An AOF rewrite on another node of the host while r1 saves: r2 waits
	// for both.
	s.answer("r1", "")
	s.saving("r1", source.TriggerUser)
	s.sample("p3", source.Info{AOFRewriteInProgress: source.Some[int64](1)}, nil)
	want(t, "r1 ended, p3 rewriting", s.ended("r1", "ok"))
	want(t, "p3 done", s.idle("p3"), "r2")
}

func TestRollStopsAtARefusal(t *testing.T) {
	s := newSim(t, threeShards(), Config{})
	want(t, "start", s.r.Start(), "r1")
	want(t, "r1 saved", s.save("r1"), "r2")
	want(t, "r2 refused", s.answer("r2", "NOPERM User roller has no permissions to run the 'bgsave' command"))
	p := s.r.Progress()
	if p.State != Failed || p.Err != "BGSAVE on 10.0.0.1:r2: NOPERM User roller has no permissions to run the 'bgsave' command" {
		t.Errorf("after the refusal: %+v", p)
	}
	want(t, "later events", s.idle("r3"))
	if st := s.r.Steps(); st[0].State != StepDone || st[1].State != StepFailed || st[2].State != StepCancelled {
		t.Errorf("steps %v %v %v", st[0].State, st[1].State, st[2].State)
	}
}

func TestRollStopsAtAFailedSaveOrALostNode(t *testing.T) {
	s := newSim(t, threeShards(), Config{})
	s.r.Start()
	s.answer("r1", "")
	want(t, "r1 failed", s.ended("r1", "err"))
	if p := s.r.Progress(); p.State != Failed || p.Err != "the save on 10.0.0.1:r1 ended with status err" {
		t.Errorf("%+v", p)
	}

	s = newSim(t, threeShards(), Config{})
	s.r.Start()
	s.answer("r1", "")
	s.saving("r1", source.TriggerUser)
	// A stall is not a loss.
	want(t, "r1 stalls", s.feed(source.Event{Node: "r1", Kind: source.EventDisconnected, Stalled: true, Err: "not answering for 1.5s"}))
	if p := s.r.Progress(); p.State != Running {
		t.Fatalf("stalled: %+v", p)
	}
	want(t, "r1 dies", s.feed(source.Event{Node: "r1", Kind: source.EventDisconnected, Err: "connection refused"}))
	if p := s.r.Progress(); p.State != Failed || p.Err != "10.0.0.1:r1 went down during its save: connection refused" {
		t.Errorf("%+v", p)
	}

	// A node down when its turn comes.
	s = newSim(t, threeShards(), Config{})
	s.feed(source.Event{Node: "r2", Kind: source.EventDisconnected, Err: "connection refused"})
	s.r.Start()
	want(t, "r1 saved, r2 down", s.save("r1"))
	if p := s.r.Progress(); p.State != Failed || p.Err != "10.0.0.1:r2 is down: connection refused" {
		t.Errorf("%+v", p)
	}
}

func TestRollCancel(t *testing.T) {
	s := newSim(t, threeShards(), Config{})
	s.r.Start()
	s.answer("r1", "")
	s.r.Cancel()
	if p := s.r.Progress(); p.State != Cancelling || len(p.Running) != 1 {
		t.Errorf("cancelled while r1 saves: %+v", p)
	}
	want(t, "r1 ends", s.ended("r1", "ok"))
	p := s.r.Progress()
	if p.State != Cancelled || p.Done != 1 {
		t.Errorf("after r1: %+v", p)
	}
	if st := s.r.Steps(); st[1].State != StepCancelled || st[2].State != StepCancelled {
		t.Errorf("steps: %+v", st)
	}
}

// The memory check (source/risk, from the node's latest sample) holds the
// roll before a risky node; Confirm sends it, the next node is checked
// again. Force sends every node without holding, keeping the verdict.
func TestRollMemoryCheck(t *testing.T) {
	const mib = 1 << 20
	risky := source.Info{RDBInProgress: source.Some[int64](0), UsedMemory: source.Some[int64](900 * mib),
		MaxMemory: source.Some[int64](1024 * mib), RDBLastCOW: source.Some[int64](200 * mib)}
	s := newSim(t, threeShards(), Config{})
	s.sample("r2", risky, nil)
	want(t, "start", s.r.Start(), "r1")
	want(t, "r1 saved", s.save("r1"))
	p := s.r.Progress()
	if p.State != Held || p.Held == nil || p.Held.Node.ID != "r2" || !p.Held.Risk.Exceeds() {
		t.Fatalf("%+v", p)
	}
	if c, _ := p.Held.Risk.Decisive(); c.Limit != risk.LimitMaxMemory || c.Need != 1100*mib {
		t.Errorf("held by %+v", c)
	}
	want(t, "events while held", s.idle("r3"))
	want(t, "confirm", s.r.Confirm(), "r2")
	if p := s.r.Progress(); p.Held != nil {
		t.Errorf("still held after Confirm: %+v", p.Held)
	}
	s.sample("r3", risky, nil)
	want(t, "r2 saved: r3 is risky too", s.save("r2"))
	if p := s.r.Progress(); p.State != Held || p.Held.Node.ID != "r3" {
		t.Fatalf("r3 not held: %+v", p)
	}

	s = newSim(t, threeShards(), Config{Force: true})
	s.sample("r1", risky, nil)
	want(t, "forced start", s.r.Start(), "r1")
	if st := s.r.Steps()[0]; !st.Risk.Exceeds() {
		t.Errorf("forced step keeps no verdict: %+v", st.Risk)
	}
}
