package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/ui"
	"github.com/vkwatch/vkwatch/ui/replay"
	"github.com/vkwatch/vkwatch/ui/tty"
)

func (a *app) replayCommand() *cobra.Command {
	var speed float64
	var from, to string
	var ascii asciiFlag
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay a recording in the monitor (space pause, arrows seek)",
		Long: `replay drives the monitor from a recording made with --record: space pauses,
left/right seek 10 s, --speed sets the pace. --from and --to replay only a
window (03:00 is a clock time, +90m an offset from the start). A recording
cut short by a crash replays up to its last whole line.`,
		Args: oneFile("replay", "a recording made with --record"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if speed <= 0 {
				return usageErr("--speed must be positive")
			}
			return a.runReplay(cmd.Context(), args[0], speed, from, to, ascii.screen(a.getenv))
		},
	}
	cmd.Flags().Float64Var(&speed, "speed", 1, "playback speed (2 = twice as fast)")
	cmd.Flags().StringVar(&from, "from", "", "replay from this time (03:00, +90m, RFC 3339)")
	cmd.Flags().StringVar(&to, "to", "", "replay up to this time")
	registerASCII(cmd.Flags(), &ascii)
	return cmd
}

func (a *app) runReplay(ctx context.Context, path string, speed float64, from, to string, ascii bool) error {
	rf, err := record.OpenFile(path)
	if err != nil {
		return withCode(exitUsage, err) // as recording and report: a file that is no recording is bad input
	}
	defer rf.Close()
	win := record.Window{From: rf.Start, To: rf.End}
	if from != "" || to != "" {
		if win, err = parseWindow(from, to, &record.Summary{Header: rf.Header, First: rf.Start, Last: rf.End}); err != nil {
			return usageErr("%v", err)
		}
		win.From, win.To = max(win.From, rf.Start), min(win.To, rf.End)
		if win.To < win.From {
			return usageErr("%s holds no event between --from and --to", path)
		}
	}
	if rf.Truncated {
		fmt.Fprintf(a.stderr, "vkwatch: %s: %s; replaying up to its last whole line\n", inert.Text(path), inert.Text(rf.Why))
	}
	if !a.isTTY() {
		return withCode(exitNoTTY, errors.New("standard output is not a terminal: replay needs one"))
	}
	head, err := replayHead(rf)
	if err != nil {
		return err
	}

	// The UI sizes its charts from the sampling intervals the recording
	// used (one before --idle-interval came), and keeps the history its
	// session kept: what a seek reads before its target.
	interval, idle, history := watch.DefaultInterval, time.Duration(0), time.Duration(0)
	if d, err := time.ParseDuration(rf.Header.Settings["history"]); err == nil && d > 0 {
		history = d
	}
	if d, err := time.ParseDuration(rf.Header.Settings["interval"]); err == nil && d > 0 {
		interval = d
	}
	if d, err := time.ParseDuration(rf.Header.Settings["idle_interval"]); err == nil && d > 0 {
		idle = d
	}
	m := replay.New(ui.Config{
		Nodes:        replayNodes(head),
		Topology:     replayTopology(head),
		History:      history,
		Interval:     interval,
		IdleInterval: idle,
		Banner:       fmt.Sprintf("replay of %s (recorded %s)", path, rf.Header.Epoch.Format("2006-01-02 15:04:05")),
		ReadOnly:     true,
		ASCII:        ascii,
	}, &record.WindowSource{F: rf, Win: win}, replay.Options{
		Speed: speed,
		Epoch: rf.Header.Epoch,
		ParseTime: func(s string) (time.Duration, error) {
			return parseWhen(s, rf.Header.Epoch, win.From)
		},
	})
	return tty.RunUntil(ctx, a.stdin, a.stdout, m, nil)
}

// replayHead is the start of a recording: its first 10 s, which name the
// servers and the fleet a replay opens on (later nodes come in topology
// events as it plays).
func replayHead(rf *record.File) (*record.Recording, error) {
	sc, err := rf.ScanFrom(rf.Start)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	head := &record.Recording{Header: rf.Header}
	for ev, err := range sc.Events() {
		if err != nil {
			return head, err
		}
		if len(head.Events) == 10000 || ev.Offset > rf.Start+10*time.Second {
			break
		}
		head.Events = append(head.Events, ev)
	}
	return head, nil
}

// replayNodes are the servers of a recording: those of its header, in
// order, then any that only its events name (a node that joined later, in
// a topology event or its own).
func replayNodes(rec *record.Recording) []ui.Node {
	var nodes []ui.Node
	seen := map[source.NodeID]bool{}
	for _, s := range rec.Header.Servers {
		id := s.Node
		if id == "" {
			// A bench recording named its servers without their node id
			// until now: their events carry the address as the id.
			id = source.NodeID(s.Addr)
		}
		if !seen[id] {
			seen[id] = true
			nodes = append(nodes, ui.Node{ID: id, Addr: s.Addr})
		}
	}
	add := func(id source.NodeID, addr string) {
		if id != "" && !seen[id] {
			seen[id] = true
			if addr == "" {
				addr = string(id)
			}
			nodes = append(nodes, ui.Node{ID: id, Addr: addr})
		}
	}
	for _, ev := range rec.Events {
		switch {
		case ev.Topology != nil:
			// A fleet's topology names the nodes that joined later, with
			// their addresses; it is not itself a node's event.
			for _, n := range ev.Topology.Nodes() {
				add(n.ID, n.Addr)
			}
		case ev.Identity != nil:
			add(ev.Node, ev.Identity.Addr)
		default:
			add(ev.Node, "")
		}
	}
	return nodes
}

// replayTopology is the fleet a recording starts with, its first topology
// event's (the fleet view opens on it; later ones come as events), nil
// for a recording without one (one or two servers, or format version 1).
func replayTopology(rec *record.Recording) *source.Topology {
	for _, ev := range rec.Events {
		if ev.Kind == source.EventTopology && ev.Topology != nil {
			t := *ev.Topology
			return &t
		}
	}
	return nil
}
