// Package fleetview is the fleet view: three or more servers, or a
// cluster of any size, as one row per node, grouped by shard (its primary
// first, replicas under it), each with its memory, ops/s and PING p99 and
// a small chart of each, and what its running or last save costs. It
// reads the same history store as the panes, so enter opens a node's full
// pane with its history (OpenMsg), and esc comes back to the rows with
// theirs.
//
// It also drives the rolling save (B): a source/roll.Roll fed every event
// after a source/roll.Status, whose Actions the root model sends as
// tea.Cmds. It decides nothing itself: the planner does, and the view
// shows it.
//
// Like a pane and the cost view it follows the views' contract
// (view.Component): SetSize, then Refresh and View from the store; the
// root routes its keys (select, mark, sort, open) to it. A column of the
// rows is one entry of fleetCols (rows.go), its chart the chart table's.
package fleetview

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/roll"
	"github.com/vkwatch/vkwatch/source/store"
	"github.com/vkwatch/vkwatch/ui/plot"
	"github.com/vkwatch/vkwatch/ui/text"
)

// sortKey is the rows' order.
type sortKey int

const (
	sortShard   sortKey = iota // topology order: shard by shard, primary first
	sortMemory                 // footprint (used where footprint is absent), largest first
	sortOps                    // ops/s, busiest first
	sortLatency                // PING p99 of the last 10 s, slowest first
	sortSave                   // the last save's copy-on-write, costliest first
	sortCOW                    // copy-on-write now (a running save's), else the last save's: the risk
)

var sortNames = [...]string{"shard", "memory", "ops/s", "latency", "last save cost", "copy-on-write"}

// fleetRow is one node's row and its cached drawing.
type fleetRow struct {
	id    source.NodeID
	node  source.TopologyNode // as the latest topology that had it says
	shard int
	order int  // position in topology order; a gone node keeps its last
	gone  bool // no longer in the topology: kept, marked, never deleted mid-view

	plot.Columns
	charts rowCharts
	lines  []string // the row's text and chart lines, cached
	key    rowKey
}

// Model is the fleet view: its rows, their order and the selection, and
// the rolling save it drives.
type Model struct {
	top source.Topology
	// drive is the rolling save and the fleet's status it is planned
	// from (source/roll's Driver, the one the save command runs headless):
	// its roll is planned (waiting for B again), running, or over (its
	// last line stays until esc or the next B).
	drive *roll.Driver
	// expected is the roll's next node as Config.Expect was last told.
	expected []source.NodeID

	rows   []*fleetRow // topology order, gone nodes after their shard
	byID   map[source.NodeID]*fleetRow
	shown  []*fleetRow // display order
	sel    source.NodeID
	scroll int // first shown row on screen
	marked map[source.NodeID]bool
	sort   sortKey
	// filter keeps the rows it matches (see matches); editing while the
	// user types it after /.
	filter  string
	editing bool

	width, height int
	geo           fleetGeo
	keys          Keys
	holds         plot.Holds // the rows' scale tops between frames
}

// New returns the fleet view of top. rollCfg is the rolling
// save's configuration (its memory check, how many at once); the rolling
// save reads each node's state from hist, the store the model feeds
// before the view (one copy of it).
func New(top source.Topology, rollCfg roll.Config, hist *store.Store) *Model {
	f := &Model{drive: roll.NewDriverOf(top, rollCfg, hist),
		byID: map[source.NodeID]*fleetRow{}, marked: map[source.NodeID]bool{}, keys: newKeys(), holds: plot.Holds{}}
	f.setTopology()
	if len(f.rows) > 0 {
		f.sel = f.rows[0].id
	}
	return f
}

// observe folds one event in, after the store has it: the status first,
// then the roll, as the planner wants; a topology adds rows for nodes that
// joined and marks those that left. It returns the commands the roll
// wants sent now.
func (f *Model) Observe(ev source.Event) []roll.Action {
	acts := f.drive.Observe(ev)
	if ev.Kind == source.EventTopology && ev.Topology != nil {
		f.setTopology()
	}
	return acts
}

// roll is the rolling save planned, running or over; nil when none.
func (f *Model) Roll() *roll.Roll { return f.drive.Roll() }

// setTopology takes the topology the fleet's status now knows: rows for
// its nodes in its order (the status made them, in Status.setTopology:
// the topology becomes rows once), the nodes that left kept and marked
// gone.
func (f *Model) setTopology() {
	status := f.drive.Status()
	f.top = status.Topology()
	seen := map[source.NodeID]bool{}
	for k, n := range status.Nodes() {
		r := f.byID[n.Node.ID]
		if r == nil {
			r = &fleetRow{id: n.Node.ID, Columns: plot.NewColumns()}
			f.byID[n.Node.ID] = r
			f.rows = append(f.rows, r)
		}
		r.node, r.shard, r.order, r.gone = n.Node, n.Shard, k, false
		seen[n.Node.ID] = true
	}
	for _, r := range f.rows {
		// A node that left keeps its last shard and place: it shows after
		// the nodes that shard has now.
		r.gone = !seen[r.id]
	}
	slices.SortStableFunc(f.rows, func(a, b *fleetRow) int {
		if c := cmp.Compare(a.shard, b.shard); c != 0 {
			return c
		}
		if a.gone != b.gone {
			return map[bool]int{true: 1, false: -1}[a.gone]
		}
		return cmp.Compare(a.order, b.order)
	})
	for i, r := range f.rows {
		r.order = i
	}
	f.shown = nil // sorted again at the next refresh
}

// addr is how a node is named on screen.
func (r *fleetRow) addr() string {
	if r.node.Addr != "" {
		return r.node.Addr
	}
	return inert.Text(string(r.id))
}

// row returns the row of a node, nil when it has none.
func (f *Model) row(id source.NodeID) *fleetRow { return f.byID[id] }

// order sorts the rows for display by the sort key, from what the store
// holds now; ties and absent values keep topology order (absent last).
// The filter keeps the rows it matches, and every saving row whatever it
// says; when the rows do not fit, the saving ones come first, so that a
// save is never scrolled out of sight.
func (f *Model) order(st *store.Store) {
	f.shown = f.shown[:0]
	for _, r := range f.rows {
		if f.filter == "" || saving(st.View(r.id)) || f.matches(r, st.View(r.id)) {
			f.shown = append(f.shown, r)
		}
	}
	defer f.savingFirst(st)
	if f.sort == sortShard {
		return
	}
	vals := make(map[source.NodeID]float64, len(f.rows))
	has := make(map[source.NodeID]bool, len(f.rows))
	for _, r := range f.rows {
		vals[r.id], has[r.id] = sortValue(f.sort, st.View(r.id))
	}
	slices.SortStableFunc(f.shown, func(a, b *fleetRow) int {
		switch {
		case has[a.id] != has[b.id]:
			return map[bool]int{true: -1, false: 1}[has[a.id]]
		case vals[a.id] != vals[b.id]:
			return cmp.Compare(vals[b.id], vals[a.id]) // largest first
		}
		return cmp.Compare(a.order, b.order)
	})
}

// saving reports whether v's node runs a save now.
func saving(v store.View) bool { return v.Latest != nil && v.Latest.Save != nil }

// savingFirst moves the saving rows to the front when the rows do not all
// fit on screen; in shard order the shards with a saving node, whole, so
// that a replica stays under its primary.
func (f *Model) savingFirst(st *store.Store) {
	if len(f.shown) <= max(f.geo.rowsFit, 1) {
		return
	}
	shardSaving := map[int]bool{}
	for _, r := range f.shown {
		if saving(st.View(r.id)) {
			shardSaving[r.shard] = true
		}
	}
	first := func(r *fleetRow) bool {
		if f.sort == sortShard {
			return shardSaving[r.shard]
		}
		return saving(st.View(r.id))
	}
	slices.SortStableFunc(f.shown, func(a, b *fleetRow) int {
		sa, sb := first(a), first(b)
		switch {
		case sa == sb:
			return 0
		case sa:
			return -1
		}
		return 1
	})
}

// state is a row's state as the filter and the summary name it.
func rowState(r *fleetRow, v store.View) string {
	switch {
	case r.gone:
		return "gone"
	case v.State == store.Disconnected:
		return "down"
	case saving(v):
		return "saving"
	}
	return "up"
}

// matches reports whether the filter keeps r: each of its words (case
// does not matter) is part of the node's address or id, or is its role
// (primary, replica), its state (up, down, saving, gone) or its shard
// ("shard:3", counted from 1).
func (f *Model) matches(r *fleetRow, v store.View) bool {
	for _, w := range strings.Fields(strings.ToLower(f.filter)) {
		switch {
		case strings.Contains(strings.ToLower(r.node.Addr), w), strings.Contains(strings.ToLower(string(r.id)), w):
		case w == r.node.Role, w == rowState(r, v), w == fmt.Sprintf("shard:%d", r.shard+1):
		case w == "up" && v.State != store.Disconnected && !r.gone:
		default:
			return false
		}
	}
	return true
}

// maxFilter bounds what the filter keeps of what is typed.
const maxFilter = 64

// editFilter takes a key typed after /: text and backspace edit the
// filter, enter keeps it, esc clears it.
func (f *Model) EditFilter(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEsc:
		f.filter, f.editing = "", false
	case tea.KeyEnter:
		f.editing = false
	case tea.KeyBackspace:
		if r := []rune(f.filter); len(r) > 0 {
			f.filter = string(r[:len(r)-1])
		}
	case tea.KeyRunes, tea.KeySpace:
		for _, c := range k.Runes {
			if len(f.filter) < maxFilter && c >= ' ' && c != 0x7f {
				f.filter += string(c)
			}
		}
		if k.Type == tea.KeySpace && len(k.Runes) == 0 {
			f.filter += " "
		}
	}
	f.shown, f.scroll = nil, 0
}

// sortValue is what a node is sorted by, and whether it has it.
func sortValue(k sortKey, v store.View) (float64, bool) {
	s := v.Latest
	switch k {
	case sortCOW:
		if s != nil && s.Save != nil && s.COW.OK {
			return float64(s.COW.V), true
		}
		if r := v.Report; r != nil && (r.COW.OK || r.PeakCOW.OK) {
			return float64(max(r.COW.Or(0), r.PeakCOW.Or(0))), true
		}
		return 0, false
	case sortSave:
		if r := v.Report; r != nil && (r.COW.OK || r.PeakCOW.OK) {
			return float64(max(r.COW.Or(0), r.PeakCOW.Or(0))), true
		}
		return 0, false
	case sortMemory:
		if s != nil && s.Footprint.OK {
			return float64(s.Footprint.V), true
		}
		if s != nil && s.Info.UsedMemory.OK {
			return float64(s.Info.UsedMemory.V), true
		}
	case sortOps:
		if s != nil && s.OpsPerSec.OK {
			return s.OpsPerSec.V, true
		}
	case sortLatency:
		if s != nil && s.Ping10s.Count > 0 {
			return float64(s.Ping10s.P99), true
		}
	}
	return 0, false
}

// selIndex is the position of the selected row in display order (0 when
// it is not there).
func (f *Model) selIndex() int {
	for i, r := range f.shown {
		if r.id == f.sel {
			return i
		}
	}
	return 0
}

// move moves the selection by d rows, within the rows.
func (f *Model) move(d int) {
	if len(f.shown) == 0 {
		return
	}
	i := min(max(f.selIndex()+d, 0), len(f.shown)-1)
	f.sel = f.shown[i].id
	f.follow()
}

// follow scrolls so that the selected row is on screen.
func (f *Model) follow() {
	fit := max(f.geo.rowsFit, 1)
	i := f.selIndex()
	f.scroll = min(max(f.scroll, i-fit+1), i)
	f.scroll = max(min(f.scroll, len(f.shown)-fit), 0)
}

// toggleMark marks or unmarks the selected node.
func (f *Model) toggleMark() {
	if f.marked[f.sel] {
		delete(f.marked, f.sel)
	} else if f.byID[f.sel] != nil {
		f.marked[f.sel] = true
	}
}

// markedInOrder returns the marked nodes in display order.
func (f *Model) markedInOrder() []source.NodeID {
	var out []source.NodeID
	for _, r := range f.shown {
		if f.marked[r.id] {
			out = append(out, r.id)
		}
	}
	return out
}

// nextSort cycles the sort key.
func (f *Model) nextSort() {
	f.sort = (f.sort + 1) % sortKey(len(sortNames))
	f.shown = nil
}

// plan plans a rolling save on what the status knows now, for the
// confirmation line; nothing is sent until start.
func (f *Model) Plan() []roll.Step { return f.drive.Plan() }

// planned reports whether a roll waits for its confirmation.
func (f *Model) Planned() bool { return f.drive.Planned() }

// dropPlan forgets a roll that was planned and not confirmed.
func (f *Model) DropPlan() {
	if f.Planned() {
		f.drive.Drop()
	}
}

// start starts the planned roll and returns its first commands.
func (f *Model) Start() []roll.Action { return f.drive.Start() }

// rollActive reports whether a roll runs (or is held, or is finishing
// after a cancel).
func (f *Model) RollActive() bool { return f.drive.Active() }

// rollStep is where a node stands in the roll, for its row: "" when it
// is not part of one.
func (f *Model) rollStep(id source.NodeID) string {
	if f.Roll() == nil {
		return ""
	}
	steps := f.Roll().Steps()
	p := f.Roll().Progress()
	for i, st := range steps {
		if st.Node.ID != id {
			continue
		}
		n := fmt.Sprintf("roll %d/%d ", i+1, len(steps))
		switch {
		case f.Roll().State() == roll.Planned:
			return n + "planned"
		case p.Held != nil && p.Held.Node.ID == st.Node.ID:
			return n + "held: memory check"
		}
		return n + map[roll.StepState]string{
			roll.StepWaiting: "waiting", roll.StepSent: "BGSAVE sent", roll.StepSaving: "saving",
			roll.StepDone: "saved", roll.StepFailed: "failed", roll.StepCancelled: "not started",
		}[st.State]
	}
	return ""
}

// title says what the fleet is, for the title line: the cluster, its
// shards and nodes and what told them, or the list of servers.
func (f *Model) Title() string {
	nodes := len(f.top.Nodes())
	if !f.top.Cluster {
		return fmt.Sprintf("%d servers, one shard each", nodes)
	}
	from := f.top.Via
	if f.top.From != "" {
		from += " from " + f.top.From
	}
	return fmt.Sprintf("cluster: %d nodes in %d shards (%s)", nodes, len(f.top.Shards), strings.TrimSpace(from))
}

// pingNote says the per-node PING interval in force, as the fleet set it:
// the nodes probed finely because they save or are about to (attention
// follows the save), and the interval of the rest; then how often INFO
// samples them.
func (f *Model) pingNote() string {
	note := f.pings()
	if f.top.SampleInterval > 0 {
		note += "; " + text.SamplingNote(f.top.SampleInterval, f.top.AttentionSampleInterval, "in attention")
	}
	return note
}

// pings is pingNote's PING part.
func (f *Model) pings() string {
	if f.top.PingInterval <= 0 {
		return "PING interval n/a"
	}
	rest := "PING every " + f.top.PingInterval.String() + " per node"
	att := f.top.Attention
	if len(att) == 0 {
		return rest
	}
	if att[0].Interval == f.top.PingInterval {
		return rest // a --ping-interval: attention moves only the samples
	}
	var hot string
	if len(att) == 1 {
		hot = fmt.Sprintf("%s (%s)", att[0].Addr, att[0].Reason)
	} else {
		hot = fmt.Sprintf("%d nodes saving or about to", len(att))
	}
	return fmt.Sprintf("PING every %s: %s; every %s: the other %d", att[0].Interval, hot,
		f.top.PingInterval, max(len(f.top.Nodes())-len(att), 0))
}

// Len is how many rows there are, gone nodes included.
func (f *Model) Len() int { return len(f.rows) }

// IDs are the nodes, one a row, in topology order.
func (f *Model) IDs() []source.NodeID {
	out := make([]source.NodeID, len(f.rows))
	for i, r := range f.rows {
		out[i] = r.id
	}
	return out
}

// Addr is how node id is named on screen, and whether it has a row.
func (f *Model) Addr(id source.NodeID) (string, bool) {
	if r := f.row(id); r != nil {
		return r.addr(), true
	}
	return "", false
}

// Selected is the node of the row with the cursor.
func (f *Model) Selected() source.NodeID { return f.sel }

// Editing reports whether a filter is being typed after /: every key is
// text then, q and b included (EditFilter).
func (f *Model) Editing() bool { return f.editing }

// ChartWidth is the width of the rows' charts, for how far back the
// store keeps points.
func (f *Model) ChartWidth() int { return f.geo.chartW }

// Held reports whether the memory check holds the rolling save.
func (f *Model) Held() bool { return f.Roll() != nil && f.Roll().State() == roll.Held }

// Drop forgets the rolling save, planned or over.
func (f *Model) Drop() { f.drive.Drop() }

// Expect returns the roll's next nodes (none once it is over or
// cancelled) when they changed since it was last asked.
func (f *Model) Expect() ([]source.NodeID, bool) {
	var next []source.NodeID
	if r := f.Roll(); r != nil {
		next = r.Next()
	}
	if slices.Equal(next, f.expected) {
		return nil, false
	}
	f.expected = next
	return next, true
}
