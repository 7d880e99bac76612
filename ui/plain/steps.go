// Package plain is the plain text of the commands that run without the
// UI, on a terminal or into a file: vkwatch save's lines per node (and a
// bar for the one saving), load's preload bar and its writers' rate, the
// listing of a recording. On a terminal, progress is redrawn in place; in
// a file or a pipe, it is written as lines of its own, without \r.
// Whatever a server or a file said is made inert before it is written.
package plain

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/bubbles/progress"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/roll"
)

// Steps tells a roll's progress: a line each time a node's step changes,
// and, on a terminal, a bar for the node saving, redrawn in place.
type Steps struct {
	w      io.Writer
	tty    bool
	single bool // one server: its full report when it is saved
	states map[source.NodeID]roll.StepState
	bar    progress.Model
	drawn  bool // a bar line is on screen, to be cleared before a line
	head   bool
}

// NewSteps writes a roll's progress to w, a terminal when tty. A roll of
// a single server (vkwatch save ADDR) has no heading and prints the
// whole report of its save.
func NewSteps(w io.Writer, tty, single bool) *Steps {
	return &Steps{w: w, tty: tty, single: single, states: map[source.NodeID]roll.StepState{},
		bar: progress.New(progress.WithDefaultGradient(), progress.WithWidth(30), progress.WithoutPercentage())}
}

// Update is fleet.Drive's Progress: it prints what changed.
func (p *Steps) Update(r *roll.Roll, st *roll.Status) {
	steps := r.Steps()
	if !p.head {
		p.head = true
		if !p.single {
			p.line(fmt.Sprintf("rolling save: %d node%s, one per shard, a replica where there is one", len(steps), plural(len(steps))))
		}
	}
	var saving []string
	for i, step := range steps {
		n, _ := st.Node(step.Node.ID)
		if prev, ok := p.states[step.Node.ID]; !ok && step.State == roll.StepWaiting || ok && prev == step.State {
			if step.State == roll.StepSaving && p.tty {
				saving = append(saving, p.barLine(i, len(steps), step, n))
			}
			continue
		}
		p.states[step.Node.ID] = step.State
		if step.State == roll.StepSent || step.State == roll.StepCancelled && step.Risk.Exceeds() {
			// The memory check comes before the BGSAVE, and is said
			// first: before "BGSAVE sent", or before "not started" where
			// it held the node.
			for j, l := range ForkVerdict(step.Risk) {
				if j == 0 {
					l = StepHead(i, len(steps), step) + l
				} else {
					l = "      " + l
				}
				p.line(l)
			}
		}
		p.line(StepLine(i, len(steps), step, n))
		if step.State == roll.StepDone && step.Report != nil {
			lines := ReportLines(step.Report)
			if !p.single {
				lines = lines[1:2] // the COW line: what the save cost
			}
			for _, l := range lines {
				p.line("      " + strings.TrimSpace(l))
			}
		}
	}
	if len(saving) > 0 {
		p.clear()
		fmt.Fprint(p.w, strings.Join(saving, "  "))
		p.drawn = true
	}
}

// barLine is a saving node's bar: its place, the bar, the percentage.
func (p *Steps) barLine(i, total int, step roll.Step, n roll.NodeStatus) string {
	f, ok := SaveFraction(n)
	if !ok {
		return inert.Text(StepLine(i, total, step, n))
	}
	return fmt.Sprintf("[%d/%d] %s %s %3.0f%%", i+1, total, inert.Text(step.Node.Addr), p.bar.ViewAs(f), f*100)
}

// line prints a permanent line, clearing the bar first. What the
// servers said in it (addresses, errors, report fields) is made inert.
func (p *Steps) line(s string) {
	p.clear()
	fmt.Fprintln(p.w, inert.Text(s))
}

func (p *Steps) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// Finish clears the bar.
func (p *Steps) Finish() { p.clear() }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
