// Package store keeps what vkwatch has seen of each server, by node id: its
// samples within a retention window, where saves ran and where it was
// unreachable, its save reports and the cost curves of its saves (the
// running one and the last few), with a freeze for a paused view.
//
// It is pure data, the DataStore of bottom: events go in through Add, and
// every view (a node's pane, the cost-curve view, fleet rows) reads the same
// history through View, so a node keeps its history when the view changes.
// It imports neither bubbletea nor lipgloss and does no I/O. A Store is not
// safe for concurrent use: the UI owns it and uses it from Update.
package store

import (
	"math"
	"slices"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/saves"
)

// Defaults for Config fields left zero.
const (
	DefaultKeep  = 2 * time.Minute
	DefaultSaves = 8
)

// MaxSpikes bounds the spikes a node keeps (View.Spikes): a spike with its
// evidence is about a kilobyte, and a server that spikes at every sample
// (one a 200 ms interval) would fill the default window with 600; a
// chart cannot mark more than a few dozen apart anyway.
const MaxSpikes = 64

// Config says how much a Store keeps.
type Config struct {
	// Keep is how far back samples, save spans and gaps are kept, from the
	// newest event's offset (default 2m). SetKeep changes it.
	Keep time.Duration
	// Saves is how many ended saves' cost curves are kept per node
	// (default 8), however old: the cost-curve view compares them.
	Saves int
	// Columns are the figures kept of each sample within the window, in
	// View.Points (the charts' metrics). A whole sample is about 1.8 KB and
	// a node holds 600 of them at the default history; a column holds 8
	// bytes a sample, so memory stays flat with fleet size (issue 21).
	Columns []Column
}

// Column reads one figure of a sample; false when the sample lacks it
// (absent is not zero: the column holds NaN and Value says so).
type Column func(s *source.Sample) (float64, bool)

// Series is a node's samples within the retention window as compact
// columns of numbers, oldest first, one per Seq: each sample's offset
// and, for each of the store's Columns, its value. Its slices belong to
// the store.
type Series struct {
	Offsets []time.Duration
	cols    [][]float64
}

// Len is how many samples the series holds.
func (s Series) Len() int { return len(s.Offsets) }

// Value is column col of sample i; false when the sample lacked it.
func (s Series) Value(col, i int) (float64, bool) {
	v := s.cols[col][i]
	return v, !math.IsNaN(v)
}

// head is the first k samples.
func (s Series) head(k int) Series {
	out := Series{Offsets: s.Offsets[:k], cols: make([][]float64, len(s.cols))}
	for c := range s.cols {
		out.cols[c] = s.cols[c][:k]
	}
	return out
}

// drop removes the first k samples. The arrays are only resliced: append
// moves the live part to a new array when it outgrows this one, so memory
// stays within about twice the window.
func (s *Series) drop(k int) {
	s.Offsets = s.Offsets[k:]
	for c := range s.cols {
		s.cols[c] = s.cols[c][k:]
	}
}

// add appends one sample's figures.
func (s *Series) add(smp *source.Sample, cols []Column) {
	if s.cols == nil {
		s.cols = make([][]float64, len(cols))
	}
	s.Offsets = append(s.Offsets, smp.Offset)
	for c, get := range cols {
		v, ok := get(smp)
		if !ok {
			v = math.NaN()
		}
		s.cols[c] = append(s.cols[c], v)
	}
}

// ConnState is what a node's connection is known to be.
type ConnState int

const (
	Connecting   ConnState = iota // nothing heard yet
	Connected                     // an EventConnected, or samples arriving
	Disconnected                  // an EventDisconnected: the watcher retries
)

// Span is a save as a time chart marks it: from Start to End, or to the
// last sample that saw it running while it has not ended.
type Span struct {
	Kind    source.SaveKind
	Trigger source.Trigger
	Start   time.Duration
	End     time.Duration
	Ended   bool
}

// Gap is a disconnection: no samples from From to To (To is not known
// while Open: a chart draws it to its right edge).
type Gap struct {
	From, To time.Duration
	Open     bool
}

// Curve is one save's cost against its progress: valkey PR #905's plot of
// memory against keys processed / keys total.
type Curve struct {
	Node      source.NodeID
	Addr      string
	Kind      source.SaveKind
	Trigger   source.Trigger
	Started   time.Duration // offset of the first sample that saw it running
	StartedAt time.Time
	Running   bool
	Status    string // the report's status once ended; empty while running
	// BaseFootprint is Sample.Footprint of the last sample before the save
	// was seen running (absent when that sample lacked it, or none was
	// seen): what the save's footprint is measured above.
	BaseFootprint source.Opt[int64]
	// Points are one per sample that knew the save's progress; an ended
	// save's are its report's Curve when the report has one.
	Points []source.CurvePoint
}

// View is a node's history as a reader sees it: live, or as it was when
// Freeze was called. Its slices belong to the store and must not be
// modified; they stay valid (as they were) after later Adds.
type View struct {
	ID       source.NodeID
	Identity *source.Identity // from the last EventConnected; nil before one
	State    ConnState
	Reason   string // why the connection dropped
	// Stalled, while Disconnected, says the server is connected but
	// silent (source.Event.Stalled): Reason says for how long.
	Stalled bool
	Latest  *source.Sample // the newest sample, nil before one
	Report  *source.SaveReport
	// Forecast is the next fork save's forecast from the latest sample
	// and the node's own saves (source/forecast); absent before a sample
	// with used_memory. Stuck says why the running save looks stuck
	// (forecast.Node.Stuck), empty when it does not or none runs.
	Forecast source.Opt[forecast.Forecast]
	// Methods is the next save's forecast for each method, only on a
	// server that can save both ways (source.MethodSwitch): the monitor
	// sets them side by side, and the method key switches between them.
	Methods source.Opt[Methods]
	Stuck   string
	// Points are the node's samples within the retention window as the
	// store's columns (Latest is the only whole sample kept).
	Points Series
	Spans  []Span
	Gaps   []Gap
	// Spikes are the node's PING spikes within the retention window
	// (package spike), oldest first, at most MaxSpikes: where a chart
	// marks them and a spikes view lists them. A spike's time is when
	// its PING was sent (Spike.Sent).
	Spikes []source.Spike
	// Curves are the ended saves' curves, oldest first, then the running
	// save's (Running set) if one runs.
	Curves []Curve
	// Version changes whenever anything above changes: a reader caches
	// what it drew from a View against it.
	Version uint64
}

// Methods is the next save's forecast for each method on a server that
// can save both ways: the fork side whatever the method set, the forkless
// side from the node's last forkless save (absent before one:
// forecast.NoForklessYet).
type Methods struct {
	Fork     source.Opt[forecast.Forecast]
	Forkless source.Opt[forecast.ForklessForecast]
}

// node is the store's state for one node.
type node struct {
	live     View
	last     *source.Sample // the sample added last (a save's curve starts above it)
	dropped  uint64         // samples dropped from the front so far
	lastSeq  uint64
	pushed   bool
	running  *Curve // the running save's curve, also last in live.Curves
	frozen   View
	frozenN  uint64 // dropped + len(Points) at the freeze
	hasFroze bool
	fc       forecast.Node
}

// Store holds every node's history. The zero value is not usable: New.
type Store struct {
	cfg      Config
	nodes    map[source.NodeID]*node
	order    []source.NodeID
	now      time.Duration // the newest event offset seen
	reports  []source.SaveReport
	frozen   bool
	frozenAt time.Duration
	frozenR  int // len(reports) at the freeze
	// pruned is s.now at the last prune of every node; between two, only
	// the node an event is for is pruned.
	pruned time.Duration
}

// New returns an empty store.
func New(cfg Config) *Store {
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.Saves <= 0 {
		cfg.Saves = DefaultSaves
	}
	return &Store{cfg: cfg, nodes: map[source.NodeID]*node{}}
}

// Reset forgets every node's history, for a reader that feeds the store
// again from elsewhere (a replay seeking). Nodes stay known, in order, and
// their Versions keep rising, so a cached drawing is never taken for the
// new history's; the reports of saves that ended before keepBefore stay
// (a replay feeds again only what follows).
func (s *Store) Reset(keepBefore time.Duration) {
	for id, n := range s.nodes {
		s.nodes[id] = &node{live: View{ID: id, Version: n.live.Version + 1}}
	}
	kept := s.reports[:0:0]
	for _, r := range s.reports {
		if r.Ended < keepBefore {
			kept = append(kept, r)
		}
	}
	s.reports = kept
	s.now, s.pruned = 0, 0
	s.frozenAt, s.frozenR = 0, min(s.frozenR, len(kept))
}

// SetKeep changes how far back history is kept (a wider chart shows more).
func (s *Store) SetKeep(d time.Duration) {
	if d > 0 {
		s.cfg.Keep = d
		s.prune()
	}
}

// Nodes returns the node ids seen, in the order their first event came.
func (s *Store) Nodes() []source.NodeID { return slices.Clone(s.order) }

// Now is the newest event offset seen: the right edge of a time chart.
// While frozen it is the offset at the freeze.
func (s *Store) Now() time.Duration {
	if s.frozen {
		return s.frozenAt
	}
	return s.now
}

// Freeze makes View, Now and ShownReports return what they return now,
// until Thaw, while Add goes on folding events (collection never pauses).
// Nothing a frozen view shows is dropped meanwhile.
func (s *Store) Freeze() {
	if s.frozen {
		return
	}
	s.frozen, s.frozenAt, s.frozenR = true, s.now, len(s.reports)
	for _, n := range s.nodes {
		n.freeze()
	}
}

// Thaw ends a freeze: views are live again.
func (s *Store) Thaw() {
	if !s.frozen {
		return
	}
	s.frozen = false
	for _, n := range s.nodes {
		n.hasFroze = false
		n.frozen = View{}
	}
	s.prune()
}

// View returns the node's history as it is, or as it was at Freeze. An
// unknown node has an empty view (Connecting, nothing seen).
func (s *Store) View(id source.NodeID) View {
	n := s.nodes[id]
	switch {
	case n == nil:
		return View{ID: id}
	case s.frozen && n.hasFroze:
		v := n.frozen
		end := int(n.frozenN - min(n.dropped, n.frozenN))
		v.Points = n.live.Points.head(min(end, n.live.Points.Len()))
		return v
	case s.frozen:
		return View{ID: id} // first seen after the freeze
	}
	return n.live
}

// Live returns the node's history as it is, freeze or not: what a check
// before sending a command must judge by.
func (s *Store) Live(id source.NodeID) View {
	if n := s.nodes[id]; n != nil {
		return n.live
	}
	return View{ID: id}
}

// Reports returns every save report seen, of every node, in arrival order
// (live, freeze or not). The slice belongs to the store.
func (s *Store) Reports() []source.SaveReport { return s.reports }

// ShownReports is how many of Reports a view shows: all of them, or those
// that had arrived at the freeze.
func (s *Store) ShownReports() int {
	if s.frozen {
		return s.frozenR
	}
	return len(s.reports)
}

// Add folds one event into its node's history. It reports whether the
// event changed anything (an event without its payload does not).
func (s *Store) Add(ev source.Event) bool {
	if ev.Offset > s.now {
		s.now = ev.Offset
	}
	n := s.node(ev.Node)
	l := &n.live
	changed := true
	switch ev.Kind {
	case source.EventConnected:
		l.Identity, l.State, l.Reason, l.Stalled = ev.Identity, Connected, "", false
		if k := len(l.Gaps); k > 0 && l.Gaps[k-1].Open {
			l.Gaps = cloneAppend(l.Gaps[:k-1], Gap{From: l.Gaps[k-1].From, To: ev.Offset})
		}
	case source.EventDisconnected:
		l.State, l.Reason, l.Stalled = Disconnected, ev.Err, ev.Stalled
		if k := len(l.Gaps); k == 0 || !l.Gaps[k-1].Open {
			l.Gaps = append(l.Gaps, Gap{From: ev.Offset, Open: true})
		}
	case source.EventSample, source.EventSaveStarted:
		changed = ev.Sample != nil && n.addSample(ev.Sample, s.cfg.Columns)
	case source.EventSaveEnded:
		changed = ev.Report != nil
		if changed {
			rep := n.judge(ev.Report)
			s.reports = append(s.reports, *rep)
			n.endSave(rep, s.cfg.Saves)
		}
	case source.EventSpike:
		changed = ev.Spike != nil
		if changed {
			if len(l.Spikes) == MaxSpikes {
				// A new slice: a view handed out before keeps its own.
				l.Spikes = slices.Clone(l.Spikes[1:])
			}
			l.Spikes = append(l.Spikes, *ev.Spike)
		}
	default:
		changed = false
	}
	if changed {
		l.Version++
	}
	if s.now-s.pruned >= time.Second {
		s.prune()
	} else if cut := s.Now() - s.cfg.Keep; cut > 0 {
		n.prune(cut)
	}
	return changed
}

// node returns id's state, creating it on its first event.
func (s *Store) node(id source.NodeID) *node {
	n := s.nodes[id]
	if n == nil {
		n = &node{live: View{ID: id}}
		s.nodes[id] = n
		s.order = append(s.order, id)
	}
	return n
}

// prune drops what is older than the retention window, never what a
// frozen view shows.
func (s *Store) prune() {
	s.pruned = s.now
	cut := s.Now() - s.cfg.Keep
	if cut <= 0 {
		return
	}
	for _, n := range s.nodes {
		n.prune(cut)
	}
}

// freeze keeps the node's view as it is now. Its slices are copied where
// Add edits in place (spans, gaps and curves); points are only appended
// to, so a count is enough.
func (n *node) freeze() {
	v := n.live
	v.Spans = slices.Clone(v.Spans)
	v.Gaps = slices.Clone(v.Gaps)
	v.Curves = slices.Clone(v.Curves)
	n.frozen, n.frozenN, n.hasFroze = v, n.dropped+uint64(v.Points.Len()), true
}

func (n *node) prune(cut time.Duration) {
	l := &n.live
	k := 0
	for k < len(l.Points.Offsets) && l.Points.Offsets[k] < cut {
		k++
	}
	if k > 0 {
		l.Points.drop(k)
		n.dropped += uint64(k)
	}
	// Spans and gaps are few: filter into new slices, so a view handed out
	// before keeps what it had.
	if slices.ContainsFunc(l.Spans, func(sp Span) bool { return sp.Ended && sp.End < cut }) {
		l.Spans = slices.DeleteFunc(slices.Clone(l.Spans), func(sp Span) bool { return sp.Ended && sp.End < cut })
	}
	if slices.ContainsFunc(l.Gaps, func(g Gap) bool { return !g.Open && g.To < cut }) {
		l.Gaps = slices.DeleteFunc(slices.Clone(l.Gaps), func(g Gap) bool { return !g.Open && g.To < cut })
	}
	if len(l.Spikes) > 0 && l.Spikes[0].Sent < cut {
		l.Spikes = slices.DeleteFunc(slices.Clone(l.Spikes), func(sp source.Spike) bool { return sp.Sent < cut })
	}
}

// addSample records a sample once (the watcher sends the sample that saw
// a save start both as a sample and as the save's start), keeps the save
// span and the running save's curve up to date, and reports whether the
// sample was new.
func (n *node) addSample(smp *source.Sample, cols []Column) bool {
	l := &n.live
	if n.pushed && smp.Seq == n.lastSeq {
		return false
	}
	var prev *source.Sample
	if l.Points.Len() > 0 {
		prev = n.last // still in the window, as the curve's base has always been
	}
	l.Points.add(smp, cols)
	n.last, n.lastSeq, n.pushed = smp, smp.Seq, true
	n.fc.Observe(smp)
	n.forecast()
	l.Stuck, _ = n.fc.Stuck()
	if l.Latest == nil || smp.Offset >= l.Latest.Offset {
		l.Latest = smp
	}
	if l.State == Connecting {
		l.State = Connected
	}
	if smp.Save != nil {
		n.span(smp)
		n.curve(smp, prev)
	}
	return true
}

// span extends the span of the save the sample shows, or opens one. A
// save is the tracker's: known by the kind and start its SaveProgress
// carries (and its report repeats), as its curve is. Another save shown
// means the tracker began another job (an AOF rewrite that waited for a
// BGSAVE, a replica's sync right after a save): the span open before is
// over at the last sample that saw it, until its report says where.
func (n *node) span(smp *source.Sample) {
	l := &n.live
	sv := smp.Save
	k := len(l.Spans)
	if k > 0 && !l.Spans[k-1].Ended {
		last := l.Spans[k-1]
		if last.Kind == sv.Kind && last.Start == sv.Started {
			last.End = max(last.End, smp.Offset)
			if sv.Trigger.Kind != "" {
				// The tracker's latest word: a BGSAVE's answer can come
				// after the first sample that showed its save.
				last.Trigger = sv.Trigger
			}
			l.Spans = cloneAppend(l.Spans[:k-1], last)
			return
		}
		l.Spans = cloneAppend(l.Spans[:k-1], endSpan(last, last.End))
	}
	l.Spans = append(l.Spans, Span{Kind: sv.Kind, Trigger: sv.Trigger, Start: sv.Started, End: smp.Offset})
}

func endSpan(sp Span, end time.Duration) Span {
	sp.End, sp.Ended = end, true
	return sp
}

// cloneAppend returns a new slice of head and then x: views handed out
// before keep the elements they had.
func cloneAppend[T any](head []T, x T) []T {
	out := make([]T, len(head), len(head)+1)
	copy(out, head)
	return append(out, x)
}

// curve adds the sample to the running save's curve, starting one when
// this is the first sample of a save. prev is the sample before it.
func (n *node) curve(smp *source.Sample, prev *source.Sample) {
	l := &n.live
	sv := smp.Save
	if r := n.running; r != nil && (r.Kind != sv.Kind || r.Started != sv.Started) {
		// Another job runs now, its end never reported: keep what was seen.
		r.Running, r.Status = false, ""
		n.setRunning(nil)
	}
	if n.running == nil {
		c := Curve{
			Node: l.ID, Kind: sv.Kind, Trigger: sv.Trigger, Started: sv.Started, Running: true,
			StartedAt: smp.At.Add(sv.Started - smp.Offset),
		}
		if l.Identity != nil {
			c.Addr = l.Identity.Addr
		}
		if prev != nil && prev.Save == nil {
			c.BaseFootprint = prev.Footprint
		}
		n.setRunning(&c)
	}
	r := n.running
	if sv.Trigger.Kind != "" {
		r.Trigger = sv.Trigger // the tracker's latest word, as the span's
	}
	if pts := sv.Curve(); pts != nil {
		r.Points = pts // the tracker's points: the one copy
	} else if pt, ok := saves.CurvePointOf(smp); ok {
		// Read from a recording, which keeps no curve: no tracker ran.
		r.Points = append(r.Points, pt)
	}
	l.Curves = cloneAppend(l.Curves[:len(l.Curves)-1], *r)
}

// setRunning makes c the running curve, last in the view's curves; nil
// leaves the previous running curve among the ended ones.
func (n *node) setRunning(c *Curve) {
	l := &n.live
	if n.running != nil {
		l.Curves = cloneAppend(l.Curves[:len(l.Curves)-1], *n.running)
	}
	n.running = c
	if c != nil {
		l.Curves = cloneAppend(l.Curves, *c)
	}
}

// endSave closes the save a report describes: its span, and its curve,
// which takes the report's own curve when it has one. At most keep ended
// curves stay.
// judge returns a copy of an ended save's report with the forecast made
// before it (an RDB save's: the forecast is of a BGSAVE), and lets the
// save calibrate the node's next forecasts.
func (n *node) judge(r *source.SaveReport) *source.SaveReport {
	rep := *r
	before := n.fc.Learn(&rep)
	if f := before.V; before.OK && (rep.Kind == source.SaveFork && f.Basis != forecast.Forkless ||
		rep.Kind == source.SaveForkless && f.Basis == forecast.Forkless) {
		rep.ForecastCOW, rep.ForecastBasis = source.Some(f.COW), string(f.Basis)
	}
	n.forecast()
	return &rep
}

// forecast sets the live view's forecasts from the node's: the next
// save's, and each method's where the server can save both ways.
func (n *node) forecast() {
	l := &n.live
	f, ok := n.fc.Forecast()
	l.Forecast = source.Opt[forecast.Forecast]{V: f, OK: ok}
	l.Methods = source.Opt[Methods]{}
	if n.last == nil {
		return
	}
	if _, _, both := source.MethodSwitch(n.last.Config); both {
		var m Methods
		m.Fork.V, m.Fork.OK = n.fc.ForkForecast()
		m.Forkless.V, m.Forkless.OK = n.fc.ForklessForecast()
		l.Methods = source.Some(m)
	}
}

func (n *node) endSave(r *source.SaveReport, keep int) {
	l := &n.live
	l.Report = r
	n.closeSpan(r)
	var c Curve
	ofSave := func(c Curve) bool { return c.Kind == r.Kind && c.Started == r.Started }
	if run := n.running; run != nil && ofSave(*run) {
		c = *run
		n.running = nil
		l.Curves = l.Curves[:len(l.Curves)-1]
	} else if i := slices.IndexFunc(n.ended(), ofSave); i >= 0 {
		// Ended when the next save showed, before this report came.
		c = l.Curves[i]
		l.Curves = slices.Delete(slices.Clone(l.Curves), i, i+1)
	} else {
		c = Curve{Node: l.ID, Kind: r.Kind, Started: r.Started, StartedAt: r.StartedAt}
	}
	c.Running, c.Status = false, r.Status
	if c.Addr == "" {
		c.Addr = r.Addr
	}
	if r.Trigger.Kind != "" {
		c.Trigger = r.Trigger
	}
	if len(r.Curve) > 0 {
		c.Points = r.Curve
	}
	if len(c.Points) == 0 {
		// A save too short to be sampled mid-way has no curve to compare.
		n.trimCurves(keep)
		return
	}
	out := make([]Curve, 0, len(l.Curves)+1)
	out = append(append(out, n.ended()...), c)
	if n.running != nil {
		out = append(out, *n.running)
	}
	l.Curves = out
	n.trimCurves(keep)
}

// ended is the view's ended curves: all but the running one.
func (n *node) ended() []Curve {
	if n.running != nil {
		return n.live.Curves[:len(n.live.Curves)-1]
	}
	return n.live.Curves
}

// trimCurves keeps the newest keep ended curves (and the running one).
func (n *node) trimCurves(keep int) {
	l := &n.live
	if ended := len(n.ended()); ended > keep {
		l.Curves = slices.Clone(l.Curves[ended-keep:])
	}
}

// closeSpan closes the span of the save a report describes (its kind and
// start), or adds it whole when the save was never seen running (a save
// shorter than one sample).
func (n *node) closeSpan(r *source.SaveReport) {
	l := &n.live
	for i := len(l.Spans) - 1; i >= 0; i-- {
		if sp := l.Spans[i]; sp.Kind == r.Kind && sp.Start == r.Started {
			sp.End, sp.Ended = r.Ended, true
			if r.Trigger.Kind != "" {
				sp.Trigger = r.Trigger
			}
			l.Spans = slices.Clone(l.Spans)
			l.Spans[i] = sp
			return
		}
	}
	l.Spans = append(l.Spans, Span{Kind: r.Kind, Trigger: r.Trigger, Start: r.Started, End: r.Ended, Ended: true})
}
