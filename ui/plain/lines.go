package plain

import (
	"fmt"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/risk"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/ui/status"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/words"
)

// Plain text for the headless save command (vkwatch save): the words the
// screen uses for the same facts, without colour, so that a script's log
// and the UI say one thing one way.

// ReportLines is what a save cost, as a pane shows it given the room: its
// title, then its fields in aligned columns, the copy-on-write first.
func ReportLines(r *source.SaveReport) []string {
	b := status.Report(&style.Styles{}, r)
	lines, _ := b.Lines(&style.Styles{}, Width, 1+len(b.Fields))
	return lines
}

// Width is the width ReportLines lays a report out in: a pane's at
// 200x50 with two servers, inside its border and padding (4 columns: the
// root's TestPlainWidthIsAPanes holds it to the panes view's).
const Width = 100 - 4

// ForkVerdict says how a fork stands against the memory it has: the
// level, the projected need against the limit that decides and the
// headroom, then where the COW and the limit were read.
func ForkVerdict(f risk.Fork) []string {
	if f.Level == risk.Unknown {
		return []string{"memory check n/a: " + f.Why}
	}
	c, ok := f.Decisive()
	if !ok {
		return []string{fmt.Sprintf("memory check ok: no limit read (COW %s)", text.Bytes(f.COW.V.Bytes)),
			fmt.Sprintf("(COW: %s)", f.COW.V.From)}
	}
	return []string{
		fmt.Sprintf("memory check %s: needs %s of %s %s, headroom %s", f.Level, text.Bytes(c.Need), text.Bytes(c.Cap.Bytes), c.Limit, text.Bytes(c.Headroom)),
		fmt.Sprintf("(COW %s: %s; limit: %s)", text.Bytes(f.COW.V.Bytes), f.COW.V.From, c.Cap.From),
	}
}

// StepLine is one node of a rolling save, as its progress line says it:
// "[2/3] 127.0.0.1:7004 (replica, shard 2): saving 45%, ETA 1.2s".
func StepLine(i, total int, st roll.Step, n roll.NodeStatus) string {
	head := StepHead(i, total, st)
	switch st.State {
	case roll.StepSaving:
		return head + "saving" + saveProgress(n.Sample)
	case roll.StepDone:
		if r := st.Report; r != nil {
			// The report's duration, as the last-save lines below say it.
			return head + "saved in " + words.Observed(r)
		}
		return head + "saved in " + text.Elapsed(st.Ended-st.Sent)
	case roll.StepFailed:
		return head + "failed: " + st.Err
	case roll.StepCancelled:
		return head + "not started"
	case roll.StepSent:
		return head + "BGSAVE sent"
	}
	return head + "waiting"
}

// StepHead is what every line of a node of a rolling save begins with:
// "[2/3] 127.0.0.1:7004 (replica, shard 2): ".
func StepHead(i, total int, st roll.Step) string {
	if total == 1 {
		return fmt.Sprintf("[1/1] %s (%s): ", st.Node.Addr, orNA(st.Node.Role))
	}
	return fmt.Sprintf("[%d/%d] %s (%s, shard %d): ", i+1, total, st.Node.Addr, orNA(st.Node.Role), st.Shard+1)
}

// saveProgress is a running save's progress and ETA, when the server
// tells them.
func saveProgress(s *source.Sample) string {
	if s == nil || s.Save == nil {
		return ""
	}
	out := ""
	if f, ok := s.Save.Fraction().Get(); ok {
		out += fmt.Sprintf(" %.0f%%", f*100)
	}
	if eta, ok := s.Save.ETA.Get(); ok {
		out += ", ETA " + text.Elapsed(eta)
	}
	return out
}

// SaveFraction is the running save's progress (0..1) on the node, when
// the server tells it.
func SaveFraction(n roll.NodeStatus) (float64, bool) {
	if n.Sample == nil || n.Sample.Save == nil {
		return 0, false
	}
	return n.Sample.Save.Fraction().Get()
}

func orNA(s string) string {
	if s == "" {
		return text.NA
	}
	return s
}
