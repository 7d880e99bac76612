// Package spikesview is the spikes view (key w): every PING spike in the
// window of the servers the body speaks of, newest first, each with its
// causes and their evidence and what was checked and found nothing, as
// source/spike explained it. The ping chart marks the same spikes with
// their main cause's letter (ui/words), which this view spells out.
package spikesview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/style"
	"github.com/vkwatch/vkwatch/ui/text"
	"github.com/vkwatch/vkwatch/ui/view"
	"github.com/vkwatch/vkwatch/ui/words"
)

// Model is the spikes view's component: its keys and where it is
// scrolled (the newest spike at the top until the user scrolls down).
type Model struct {
	Spikes key.Binding // opens and closes the view
	Up     key.Binding // a newer spike
	Down   key.Binding // an older one
	Scroll key.Binding // help only: up and down in one entry

	// top is the first spike shown, counted from the newest.
	top           int
	width, height int
}

// New returns the spikes view's component.
func New() *Model {
	return &Model{
		Spikes: key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "why: spikes")),
		Up:     key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "newer spike")),
		Down:   key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "older spike")),
		Scroll: key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "scroll")),
	}
}

// SetSize implements view.Component.
func (m *Model) SetSize(w, h int) { m.width, m.height = w, h }

// Toggle implements view.Component.
func (m *Model) Toggle() *key.Binding { return &m.Spikes }

// Opened is told the view opened: on the newest spike.
func (m *Model) Opened() { m.top = 0 }

// SyncKeys implements view.Component: the arrows scroll while the view is
// open, and w says it closes it.
func (m *Model) SyncKeys(o view.Open) {
	view.SyncToggle(o, &m.Spikes, "spikes", &m.Up, &m.Down, &m.Scroll)
}

// Update implements view.Component: the arrows scroll a spike at a time
// (View keeps the last one in reach).
func (m *Model) Update(_ *view.Context, msg tea.Msg) (bool, tea.Msg) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return false, nil
	}
	switch {
	case key.Matches(k, m.Up):
		m.top = max(m.top-1, 0)
	case key.Matches(k, m.Down):
		m.top++
	default:
		return false, nil
	}
	return true, nil
}

// ShortHelp implements view.Component: the view's keys first, the save
// keys after quit.
func (m *Model) ShortHelp(h view.HelpKeys) []key.Binding {
	g := h.Keys
	return []key.Binding{m.Spikes, m.Scroll, g.Pause, h.Toggles[view.Help], g.Quit, g.Save, g.Both, h.Next}
}

// FullHelp implements view.Component.
func (m *Model) FullHelp() []key.Binding { return []key.Binding{m.Spikes} }

// View implements view.Component.
func (m *Model) View(c *view.Context) []string {
	sps := Collect(c.Store, c.Nodes)
	m.top = min(m.top, max(len(sps)-1, 0))
	return Draw(c.Styles, sps, m.width, m.height, m.top)
}

// Entry is a spike with the server it was on and when its PING was sent
// (wall time; zero where no sample dates it).
type Entry struct {
	Addr  string
	At    time.Time
	Spike source.Spike
}

// Collect is the spikes in the store's window of nodes, newest first.
func Collect(s *store.Store, nodes []source.NodeID) []Entry {
	var out []Entry
	for _, id := range nodes {
		v := s.View(id)
		addr := string(id)
		if v.Identity != nil && v.Identity.Addr != "" {
			addr = v.Identity.Addr
		}
		for _, sp := range v.Spikes {
			e := Entry{Addr: addr, Spike: sp}
			if l := v.Latest; l != nil && !l.At.IsZero() {
				e.At = l.At.Add(sp.Sent - l.Offset)
			}
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		return cmp.Or(b.At.Compare(a.At), cmp.Compare(b.Spike.Sent, a.Spike.Sent))
	})
	return out
}

// Draw lays out the spikes from top on in width x height: a spike's head
// line (time, server, PING, the rule's bar and the minute's p99 then), a
// line a cause with its letter and evidence, and for the first what was
// checked, wrapped to the width.
func Draw(st *style.Styles, sps []Entry, width, height, top int) []string {
	title := st.Top.R("PING spikes")
	rule := wrap("", st.Dim, source.SpikeRule, width)
	if len(sps) == 0 {
		out := text.FitLines(width, title+st.Dim.R(" · none in the window · w or esc closes"))
		out = append(out, rule...)
		return append(out, wrap("", st.Dim, "a spike appears here with its causes, from what the server and this host recorded of it", width)...)
	}
	out := append([]string{""}, rule...)
	shown := 0
	for i := top; i < len(sps) && len(out) < height; i++ {
		if shown > 0 {
			out = append(out, "")
		}
		out = append(out, entryLines(st, &sps[i], width, shown == 0)...)
		shown++
	}
	where := fmt.Sprintf(" · %d–%d of %d, newest first", top+1, top+shown, len(sps))
	if len(sps) > 1 {
		where += " · ↑/↓ scroll"
	}
	out[0] = text.FitLine(title+st.Dim.R(where+" · w or esc closes"), width)
	if len(out) > height {
		out = out[:max(height, 0)]
	}
	return out
}

// entryLines are one spike's lines; with checked, what was checked and
// found nothing too (the top spike's: it is long, and ↓ brings the next).
func entryLines(st *style.Styles, e *Entry, width int, checked bool) []string {
	sp := &e.Spike
	at := text.NA
	if !e.At.IsZero() {
		at = e.At.Format("15:04:05.000")
	}
	head := st.Value.R(at) + "  " + st.Addr.R(e.Addr) + "  " + st.Label.R("PING ") + st.Value.R(source.Millis(sp.Ping)) +
		st.Dim.R("  bar "+source.Millis(sp.Threshold)+", p99 "+source.Millis(sp.Normal))
	out := []string{text.FitLine(head, width)}
	for _, c := range sp.Causes {
		lead := "  " + st.Markers.R(string(words.SpikeLetter(c.Kind))) + " "
		out = append(out, wrap(lead, st.Value, c.Text(sp.Ping), width)...)
	}
	if checked && len(sp.Checked) > 0 {
		out = append(out, wrap("    ", st.Dim, "checked: "+strings.Join(sp.Checked, "; "), width)...)
	}
	return out
}

// wrap breaks s at spaces into lines of at most width cells, the first
// after lead, the rest indented as far, each painted; a word longer than
// a line is cut.
func wrap(lead string, paint style.Paint, s string, width int) []string {
	indent := strings.Repeat(" ", ansi.StringWidth(lead))
	room := max(width-ansi.StringWidth(lead), 8)
	var out []string
	line := ""
	put := func() {
		pre := indent
		if len(out) == 0 {
			pre = lead
		}
		out = append(out, pre+paint.R(text.FitLine(line, room)))
	}
	for _, w := range strings.Fields(s) {
		if line != "" && ansi.StringWidth(line)+1+ansi.StringWidth(w) > room {
			put()
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" || len(out) == 0 {
		put()
	}
	return out
}
