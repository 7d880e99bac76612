// Package metrics serves what vkwatch measures as OpenMetrics for
// Prometheus: per node the footprint the host pays and the save child's
// copy-on-write (each with the instrument that read it as a label), the
// save in progress with its progress and ETA, PING latency, and the cost of
// each finished save.
//
// It sits beside redis_exporter, not in its place: it exports what INFO
// cannot say (the /proc footprint, the live copy-on-write of a local child,
// PING latency measured at 2 ms, a save's cost as one report) and
// re-exports none of INFO's own fields, which redis_exporter already
// serves. One exporter runs beside each server, where /proc is local, and
// Prometheus gathers the fleet.
//
// An Exporter takes the fleet's events (Observe) and answers scrapes from
// the latest of them: a scrape never talks to a server.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// Exporter keeps the latest state of every node and is a
// prometheus.Collector of it. Observe may be called from many goroutines.
type Exporter struct {
	mu    sync.Mutex
	nodes map[source.NodeID]*node
	// interval is the PING interval in force per node, from the latest
	// topology (0 before one), and fine the nodes probed finer than that
	// (attention follows the save).
	interval time.Duration
	fine     map[source.NodeID]time.Duration
}

// node is what the exporter keeps of one node: a few numbers, never the
// samples themselves, so a scrape costs the same however long vkwatch ran.
type node struct {
	addr      string
	connected bool
	seen      bool // a sample arrived

	footprint     source.Opt[int64]
	footprintFrom source.Instrument
	cow           source.Opt[int64]
	cowFrom       source.Instrument
	ping          source.Latency // of the last 10 s

	save *source.SaveProgress // nil when none runs

	last  *source.SaveReport // the latest finished save
	saves map[saveKey]float64
}

type saveKey struct {
	kind   source.SaveKind
	status string
}

// New returns an Exporter that knows no node yet.
func New() *Exporter {
	return &Exporter{nodes: map[source.NodeID]*node{}}
}

func (e *Exporter) nodeLocked(id source.NodeID) *node {
	n := e.nodes[id]
	if n == nil {
		n = &node{addr: string(id), saves: map[saveKey]float64{}}
		e.nodes[id] = n
	}
	return n
}

// Observe takes one event of the fleet.
func (e *Exporter) Observe(ev source.Event) {
	// Label values are a server's text: made inert, they are valid UTF-8
	// (a label that is not makes the client library panic) and safe for
	// whoever curls the page to a terminal.
	ev = source.Inert(ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev.Kind {
	case source.EventTopology:
		if ev.Topology != nil {
			e.topologyLocked(ev.Topology)
		}
	case source.EventConnected:
		n := e.nodeLocked(ev.Node)
		n.connected = true
		if ev.Identity != nil && ev.Identity.Addr != "" {
			n.addr = ev.Identity.Addr
		}
	case source.EventDisconnected:
		n := e.nodeLocked(ev.Node)
		n.connected = false
		n.save = nil
	case source.EventSample, source.EventSaveStarted:
		if ev.Sample != nil {
			e.sampleLocked(e.nodeLocked(ev.Node), ev.Sample)
		}
	case source.EventSaveEnded:
		if ev.Report != nil {
			n := e.nodeLocked(ev.Node)
			r := *ev.Report
			r.Curve = nil // the exporter never serves it: do not keep it
			n.last = &r
			n.saves[saveKey{r.Kind, r.Status}]++
			n.save = nil
		}
	}
}

func (e *Exporter) topologyLocked(t *source.Topology) {
	e.interval = t.PingInterval
	e.fine = make(map[source.NodeID]time.Duration, len(t.Attention))
	for _, a := range t.Attention {
		e.fine[a.Node] = a.Interval
	}
	alive := map[source.NodeID]bool{}
	for _, tn := range t.Nodes() {
		alive[tn.ID] = true
		n := e.nodeLocked(tn.ID)
		if tn.Addr != "" {
			n.addr = tn.Addr
		}
	}
	// A node that left the fleet leaves the exposition: a series that
	// stops is what Prometheus understands as gone.
	for id := range e.nodes {
		if !alive[id] {
			delete(e.nodes, id)
		}
	}
}

func (e *Exporter) sampleLocked(n *node, s *source.Sample) {
	n.seen, n.connected = true, true
	n.footprint, n.footprintFrom = s.Footprint, s.FootprintFrom
	n.cow, n.cowFrom = s.COW, s.COWFrom
	// The last 10 s of PINGs and the one in flight now, which the
	// sample holds in Ping: a stall shows in the max while it lasts.
	n.ping = s.Ping10s
	n.ping.InFlight = s.Ping.InFlight
	if s.Save != nil {
		p := *s.Save
		n.save = &p
	} else {
		n.save = nil
	}
}

var (
	labels  = []string{"node", "addr"}
	withIn  = []string{"node", "addr", "instrument"}
	withKnd = []string{"node", "addr", "kind"}

	descUp = prometheus.NewDesc("vkwatch_node_up",
		"1 while vkwatch's connection to the node answers, 0 while it retries.", labels, nil)
	descFootprint = prometheus.NewDesc("vkwatch_footprint_bytes",
		"Memory the host pays for the server: its RSS plus the save child's private dirty pages (instrument proc), or used_memory_rss + current_cow_size (instrument info).", withIn, nil)
	descCOW = prometheus.NewDesc("vkwatch_cow_bytes",
		"Copy-on-write of the running save child: its Private_Dirty from /proc (instrument proc) or current_cow_size (instrument info); 0 while no save runs.", withIn, nil)
	// No kind label here: a series that keeps its labels whether a save
	// runs or not is what a 0/1 gauge must be (progress and ETA name it).
	descSaving = prometheus.NewDesc("vkwatch_save_in_progress",
		"1 while a save or AOF rewrite runs on the node, else 0.", labels, nil)
	descProgress = prometheus.NewDesc("vkwatch_save_progress_ratio",
		"current_save_keys_processed / current_save_keys_total of the running save, 0..1.", withKnd, nil)
	descETA = prometheus.NewDesc("vkwatch_save_eta_seconds",
		"Seconds the running save still needs, from the server's forkless estimate or vkwatch's smoothed rate of keys processed.", withKnd, nil)
	descPing = prometheus.NewDesc("vkwatch_ping_seconds",
		"PING round trip on vkwatch's own connection over the last 10 s (corrected for coordinated omission), by stat: p50, p99, max.", []string{"node", "addr", "stat"}, nil)
	descPingInterval = prometheus.NewDesc("vkwatch_ping_interval_seconds",
		"How far apart vkwatch sends its PINGs to the node: the resolution of vkwatch_ping_seconds.", labels, nil)

	lastLabels    = []string{"node", "addr", "kind", "status"}
	lastIn        = []string{"node", "addr", "kind", "status", "instrument"}
	descLastCOW   = prometheus.NewDesc("vkwatch_last_save_cow_bytes", "Copy-on-write of the latest finished save as the server reports it (rdb_last_cow_size / aof_last_cow_size).", lastLabels, nil)
	descLastPeak  = prometheus.NewDesc("vkwatch_last_save_peak_cow_bytes", "Largest copy-on-write vkwatch saw during the latest finished save, by instrument.", lastIn, nil)
	descLastRise  = prometheus.NewDesc("vkwatch_last_save_footprint_rise_bytes", "How far the footprint rose during the latest finished save above its level just before, by instrument.", lastIn, nil)
	descLastFork  = prometheus.NewDesc("vkwatch_last_save_fork_pause_seconds", "How long fork() blocked the main thread for the latest finished save (latest_fork_usec).", lastLabels, nil)
	descLastDur   = prometheus.NewDesc("vkwatch_last_save_duration_seconds", "How long the latest finished save ran, as vkwatch's samples saw it.", lastLabels, nil)
	descLastEnd   = prometheus.NewDesc("vkwatch_last_save_end_timestamp_seconds", "When the latest finished save ended (unix seconds).", lastLabels, nil)
	descLastPing  = prometheus.NewDesc("vkwatch_last_save_ping_max_seconds", "Worst PING during the latest finished save.", lastLabels, nil)
	descLastPingI = prometheus.NewDesc("vkwatch_last_save_ping_interval_seconds", "How far apart the PINGs of the latest finished save were (the longest interval among them): the resolution of its PING figures.", lastLabels, nil)
	descSaveCount = prometheus.NewDesc("vkwatch_saves_total", "Saves vkwatch saw finish on the node since it started, by kind and status.", lastLabels, nil)
)

// Describe sends every metric's description.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descFootprint, descCOW, descSaving, descProgress, descETA,
		descPing, descPingInterval, descLastCOW, descLastPeak, descLastRise, descLastFork, descLastDur,
		descLastEnd, descLastPing, descLastPingI, descSaveCount} {
		ch <- d
	}
}

// Collect sends the latest value of every metric. An absent figure (a
// field an older server lacks, an instrument that cannot read) is left
// out, never sent as 0.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]source.NodeID, 0, len(e.nodes))
	for id := range e.nodes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		e.collectNode(ch, inert.Text(string(id)), e.nodes[id])
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lv ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (e *Exporter) collectNode(ch chan<- prometheus.Metric, id string, n *node) {
	gauge(ch, descUp, b2f(n.connected), id, n.addr)
	if iv := e.intervalOf(source.NodeID(id)); iv > 0 {
		gauge(ch, descPingInterval, iv.Seconds(), id, n.addr)
	}
	if n.seen {
		if v, ok := n.footprint.Get(); ok {
			gauge(ch, descFootprint, float64(v), id, n.addr, string(n.footprintFrom))
		}
		if v, ok := n.cow.Get(); ok {
			gauge(ch, descCOW, float64(v), id, n.addr, string(n.cowFrom))
		}
		if n.ping.Count > 0 {
			gauge(ch, descPing, n.ping.P50.Seconds(), id, n.addr, "p50")
			gauge(ch, descPing, n.ping.P99.Seconds(), id, n.addr, "p99")
			gauge(ch, descPing, n.ping.Worst().Seconds(), id, n.addr, "max")
		}
		gauge(ch, descSaving, b2f(n.save != nil), id, n.addr)
		if n.save != nil {
			kind := string(n.save.Kind)
			if f, ok := n.save.Fraction().Get(); ok {
				gauge(ch, descProgress, f, id, n.addr, kind)
			}
			if eta, ok := n.save.ETA.Get(); ok {
				gauge(ch, descETA, eta.Seconds(), id, n.addr, kind)
			}
		}
	}
	for k, c := range n.saves {
		ch <- prometheus.MustNewConstMetric(descSaveCount, prometheus.CounterValue, c, id, n.addr, string(k.kind), k.status)
	}
	if r := n.last; r != nil {
		collectReport(ch, id, n.addr, r)
	}
}

func (e *Exporter) intervalOf(id source.NodeID) time.Duration {
	if d, ok := e.fine[id]; ok {
		return d
	}
	return e.interval
}

func collectReport(ch chan<- prometheus.Metric, id, addr string, r *source.SaveReport) {
	lv := []string{id, addr, string(r.Kind), r.Status}
	if v, ok := r.COW.Get(); ok {
		gauge(ch, descLastCOW, float64(v), lv...)
	}
	// The peak and the rise are read by the instrument of the samples
	// during the save: /proc's child Private_Dirty when it was read, else
	// INFO's current_cow_size.
	in := string(source.FromInfo)
	if r.PeakChildPrivateDirty.OK {
		in = string(source.FromProc)
	}
	if v, ok := r.PeakCOW.Get(); ok {
		gauge(ch, descLastPeak, float64(v), append(lv, in)...)
	}
	if v, ok := r.PeakFootprintDelta.Get(); ok {
		gauge(ch, descLastRise, float64(v), append(lv, in)...)
	}
	if v, ok := r.ForkPause.Get(); ok {
		gauge(ch, descLastFork, v.Seconds(), lv...)
	}
	gauge(ch, descLastDur, r.Observed.Seconds(), lv...)
	if !r.StartedAt.IsZero() {
		end := r.StartedAt.Add(r.Ended - r.Started)
		gauge(ch, descLastEnd, float64(end.UnixNano())/1e9, lv...)
	}
	if r.PingDuring.Count > 0 {
		gauge(ch, descLastPing, r.PingDuring.Worst().Seconds(), lv...)
	}
	if r.PingDuring.Interval > 0 {
		gauge(ch, descLastPingI, r.PingDuring.Interval.Seconds(), lv...)
	}
}

// Handler serves the exporter's metrics (OpenMetrics when the scraper
// asks for it, as Prometheus does) and nothing else: no Go runtime
// metrics, which say nothing about the servers.
func (e *Exporter) Handler() http.Handler {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
}

// Server is a running metrics endpoint.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen binds addr (host:port; ":9121"-style binds every interface, as
// the user asked) and serves the exporter at /metrics until Close.
func Listen(addr string, e *Exporter) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("vkwatch exporter: metrics at /metrics\n"))
	})
	s := &Server{ln: ln, done: make(chan error, 1), srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		// A scrape is a few kilobytes; a client that reads slower than
		// this holds a goroutine and nothing else.
		WriteTimeout: 30 * time.Second,
	}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on (with the port chosen when
// addr asked for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting scrapes under way finish for up to a
// second.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
