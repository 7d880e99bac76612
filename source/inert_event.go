package source

import "github.com/vkwatch/vkwatch/source/inert"

// The Inert methods return a value with every string it carries (INFO
// fields, CONFIG GET values, addresses, replies, errors, topology
// hostnames, report fields) made displayable by inert.Text, except node
// ids: they are the keys panes, rows and commands are found by, and stay
// as the server or the user gave them (they are shown through
// inert.Text). The value and what it points to are never changed (the
// recorder keeps the server's exact text): what changes is copied (a
// clean sample, and the save progress it carries, are not). The UI
// calls Event.Inert on every event it takes in. A string field added to
// one of these types needs its line here; TestInertReachesEveryString
// fails until it has one.

// text is inert.Text for a string type of this package.
func text[S ~string](s S) S { return S(inert.Text(string(s))) }

// Inert returns e with every string made inert.
func (e Event) Inert() Event {
	e.Err = text(e.Err)
	if e.Sample != nil {
		// The one event of every sample: copied only when it changes.
		if s := e.Sample.Inert(); s != *e.Sample {
			e.Sample = new(Sample)
			*e.Sample = s
		}
	}
	if e.Identity != nil {
		id := e.Identity.Inert()
		e.Identity = &id
	}
	if e.Command != nil {
		c := *e.Command
		c.Command, c.Reply, c.Err = text(c.Command), text(c.Reply), text(c.Err)
		e.Command = &c
	}
	if e.Report != nil {
		r := e.Report.Inert()
		e.Report = &r
	}
	if e.Topology != nil {
		t := e.Topology.Inert()
		e.Topology = &t
	}
	if e.Spike != nil {
		sp := e.Spike.Inert()
		e.Spike = &sp
	}
	return e
}

// Inert returns s with every string made inert: a spike's causes quote
// the server (a command's name, a client's address) and the kernel.
func (s Spike) Inert() Spike {
	if s.Causes != nil {
		cs := make([]SpikeCause, len(s.Causes))
		for i, c := range s.Causes {
			c.Kind, c.What, c.Evidence = text(c.Kind), text(c.What), text(c.Evidence)
			cs[i] = c
		}
		s.Causes = cs
	}
	if s.Checked != nil {
		ch := make([]string, len(s.Checked))
		for i, c := range s.Checked {
			ch[i] = text(c)
		}
		s.Checked = ch
	}
	return s
}

// Inert returns s with every string made inert.
func (s Sample) Inert() Sample {
	in := &s.Info
	in.ServerName, in.Version, in.Role = text(in.ServerName), text(in.Version), text(in.Role)
	for i := range in.Replicas { // an array: copied with s
		r := &in.Replicas[i]
		r.IP, r.State = text(r.IP), text(r.State)
	}
	in.RDBLastStatus, in.RDBCurrentType = text(in.RDBLastStatus), text(in.RDBCurrentType)
	in.RDBLastType, in.AOFLastStatus = text(in.RDBLastType), text(in.AOFLastStatus)
	c := &s.Config
	c.Method, c.Err, c.AppendFsync = text(c.Method), text(c.Err), text(c.AppendFsync)
	c.SaveSchedule.V = text(c.SaveSchedule.V)
	s.Proc.Cgroup, s.Proc.THPKernel = text(s.Proc.Cgroup), text(s.Proc.THPKernel)
	s.COWFrom, s.FootprintFrom = text(s.COWFrom), text(s.FootprintFrom)
	if p := s.Save; p != nil {
		// Every sample of a save carries one: copied only when it
		// changes, so that a clean sample stays uncopied then too.
		kind, trig, phase := text(p.Kind), p.Trigger.inert(), text(p.Phase)
		if kind != p.Kind || trig != p.Trigger || phase != p.Phase {
			c := *p
			c.Kind, c.Trigger, c.Phase = kind, trig, phase
			s.Save = &c
		}
	}
	return s
}

// Inert returns id with every string made inert.
func (id Identity) Inert() Identity {
	id.Addr, id.ServerName = text(id.Addr), text(id.ServerName)
	id.Version, id.Role = text(id.Version), text(id.Role)
	return id
}

// Inert returns r with every string made inert but its node id.
func (r SaveReport) Inert() SaveReport {
	r.Addr, r.Kind, r.Trigger = text(r.Addr), text(r.Kind), r.Trigger.inert()
	r.Status, r.Evidence, r.MethodNote = text(r.Status), text(r.Evidence), text(r.MethodNote)
	r.COWFrom, r.PeakCOWFrom = text(r.COWFrom), text(r.PeakCOWFrom)
	r.PeakFootprintFrom, r.ForecastBasis = text(r.PeakFootprintFrom), text(r.ForecastBasis)
	if r.WorstSpike != nil {
		sp := r.WorstSpike.Inert()
		r.WorstSpike = &sp
	}
	return r
}

func (t Trigger) inert() Trigger {
	t.Kind, t.Detail = text(t.Kind), text(t.Detail)
	return t
}

// Inert returns t with every string made inert but node ids.
func (t Topology) Inert() Topology {
	t.Via, t.From, t.Err = text(t.Via), text(t.From), text(t.Err)
	if t.Shards != nil {
		shards := make([]Shard, len(t.Shards))
		for i, sh := range t.Shards {
			nodes := make([]TopologyNode, len(sh.Nodes))
			for j, n := range sh.Nodes {
				n.Addr, n.IP, n.Hostname = text(n.Addr), text(n.IP), text(n.Hostname)
				n.Role, n.Health = text(n.Role), text(n.Health)
				nodes[j] = n
			}
			if sh.Nodes == nil {
				nodes = nil
			}
			sh.Nodes = nodes
			shards[i] = sh
		}
		t.Shards = shards
	}
	t.Attention, t.Throttled = inertAttended(t.Attention), inertAttended(t.Throttled)
	t.Share = text(t.Share)
	if t.Changes != nil {
		ch := make([]TopologyChange, len(t.Changes))
		for i, c := range t.Changes {
			c.Kind, c.Addr, c.From, c.To = text(c.Kind), text(c.Addr), text(c.From), text(c.To)
			ch[i] = c
		}
		t.Changes = ch
	}
	return t
}

// inertAttended is a copy of att with its strings made inert (nil stays nil).
func inertAttended(att []Attended) []Attended {
	if att == nil {
		return nil
	}
	out := make([]Attended, len(att))
	for i, a := range att {
		a.Addr, a.Reason = text(a.Addr), text(a.Reason)
		out[i] = a
	}
	return out
}
