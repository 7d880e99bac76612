package ui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/ui/fleetview"
)

// The model's side of the fleet view (ui/fleetview): when it opens, the
// panes of the nodes it opens, and the rolling save's commands.

// isFleet reports whether cfg opens the fleet view: a cluster, whatever
// its size, or three or more servers.
func isFleet(cfg Config) bool {
	if t := cfg.Topology; t != nil && (t.Cluster || len(t.Nodes()) >= 3) {
		return true
	}
	return len(cfg.Nodes) >= 3
}

// startFleet opens the fleet view on the configured topology (or the list
// of nodes). The rolling save checks each node's memory itself
// (source/risk); the view writes its warning (heldWarning).
func (m *Model) startFleet() {
	top := listTopology(m.cfg.Nodes)
	if m.cfg.Topology != nil {
		top = *m.cfg.Topology
	}
	m.fleet = fleetview.New(top, roll.Config{MaxParallel: max(m.cfg.MaxParallelSaves, 1)}, m.store)
	m.stack = viewStack{viewFleet}
}

// showFleet goes back from a node's pane (or two) to the fleet view.
func (m *Model) showFleet() {
	m.panes.Show()
	m.setStack(m.stack.withBase(viewFleet))
}

func (m *Model) openNodes(o fleetview.OpenMsg) {
	if o.Note != "" {
		m.setFooter(footEntry{kind: footNote, text: o.Note})
	}
	var shown []source.NodeID
	for _, id := range o.IDs {
		if addr, ok := m.fleet.Addr(id); ok {
			m.panes.Add(id, addr)
			shown = append(shown, id)
		}
	}
	if len(shown) == 0 {
		return
	}
	m.panes.Show(shown...)
	m.setStack(m.stack.withBase(viewPanes))
}

// fleetKey handles B and A in a fleet. B plans the rolling save and
// shows it for confirmation; B again starts it; while the memory check
// holds it, B sends that node's save anyway. A rolling AOF rewrite is
// not offered: a rewrites the selected node.
func (m *Model) fleetKey(aof, confirmed bool) tea.Cmd {
	f := m.fleet
	note := func(kind footKind, text string) tea.Cmd {
		m.setFooter(footEntry{kind: kind, text: text})
		return nil
	}
	switch {
	case aof:
		return note(footNote, "A: a rolling AOF rewrite is not offered for a fleet; a rewrites the selected node, B saves the fleet node by node")
	case m.stack.body() != viewFleet:
		return note(footNote, "B: the rolling save starts from the fleet view (esc goes back to it)")
	case m.cfg.ReadOnly:
		return note(footErr, "read-only: rolling save not started ("+m.readOnlyWhy+")")
	case m.cfg.Send == nil:
		return note(footErr, "cannot start a rolling save: no command channel")
	case f.Held():
		return m.rollCmds(f.Roll().Confirm())
	case f.RollActive():
		return note(footNote, "a rolling save is running: esc cancels the nodes not started")
	case confirmed && f.Planned():
		return m.rollCmds(f.Start())
	}
	if len(f.Plan()) == 0 {
		f.Drop()
		return note(footErr, "rolling save: no node to save")
	}
	m.confirm = pending{key: m.keys.SaveAll, what: "start the rolling save", other: "cancel"}
	return nil
}

// rollCmds turns the rolling save's actions into commands: each a tea.Cmd
// calling Config.Send, run concurrently by bubbletea; their answers come
// back as events, which the roll follows.
func (m *Model) rollCmds(acts []roll.Action) tea.Cmd {
	return tea.Batch(m.sendCmds(acts), m.expectCmd())
}

// expectCmd tells the fleet the roll's next node when it changed (none
// once the roll is over or cancelled), so that its fork pause falls
// between PINGs 2 ms apart, as in the headless roll (fleet.Drive).
func (m *Model) expectCmd() tea.Cmd {
	f, expect := m.fleet, m.cfg.Expect
	if f == nil || expect == nil {
		return nil
	}
	next, changed := f.Expect()
	if !changed {
		return nil
	}
	return func() tea.Msg {
		if len(next) == 0 {
			expect("")
		} else {
			expect(roll.ExpectNext, next...)
		}
		return nil
	}
}

// sendCmds turns the roll's actions into a tea.Cmd each.
func (m *Model) sendCmds(acts []roll.Action) tea.Cmd {
	send := m.cfg.Send
	if len(acts) == 0 || send == nil || m.cfg.ReadOnly {
		return nil
	}
	cmds := make([]tea.Cmd, 0, len(acts))
	for _, a := range acts {
		m.setFooter(footEntry{node: a.Node, kind: footNote,
			text: fmt.Sprintf("rolling save: sending %s to %s…", strings.Join(a.Args, " "), m.addrOf(a.Node))})
		cmds = append(cmds, func() tea.Msg {
			send(a.Node, a.Args...)
			return nil
		})
	}
	m.compose()
	return tea.Batch(cmds...)
}

// listTopology is the topology of servers given one by one: one shard
// each, in order.
func listTopology(nodes []Node) source.Topology {
	top := source.Topology{Shards: make([]source.Shard, len(nodes))}
	for i, n := range nodes {
		top.Shards[i] = source.Shard{Nodes: []source.TopologyNode{{ID: n.ID, Addr: n.Addr}}}
	}
	return top
}
