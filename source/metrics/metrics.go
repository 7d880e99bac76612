// Package metrics serves what vkwatch measures as OpenMetrics for
// Prometheus, by Prometheus' conventions (series.go): per server the
// footprint the host pays and the save child's copy-on-write (each with
// the instrument that read it as a label), the save in progress with its
// progress, ETA and stall, the next fork save's forecast and headroom,
// every PING round trip as a histogram, and the cost and outcome of the
// latest save of each kind. It also carries, embedded, a Grafana
// dashboard and Prometheus alert rules for these series (assets.go),
// which `vkwatch metrics dashboard` and `vkwatch metrics rules` print.
// README.md beside this file describes the series, the rules, the
// dashboard and how to join them with redis_exporter's.
//
// It sits beside redis_exporter, not in its place: it exports what INFO
// cannot say (the /proc footprint, the live copy-on-write of a local child,
// PING latency measured at 2 ms, a save's cost as one report) and
// re-exports none of INFO's own fields, which redis_exporter already
// serves. One exporter runs beside each server, where /proc is local, and
// Prometheus gathers the fleet.
//
// An Exporter takes the fleet's events (Observe) and the probes' PING
// counts (PingHistogram), and answers scrapes from the latest of them: a
// scrape never talks to a server.
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/probe"
)

// Exporter keeps the latest state of every node and is a
// prometheus.Collector of it. Observe may be called from many goroutines.
type Exporter struct {
	build [3]string // vkwatch_build_info's labels

	mu    sync.Mutex
	nodes map[source.NodeID]*node
	// hists are the nodes' PING histograms, which their probes count
	// into; kept for a node that leaves the fleet, so that one that comes
	// back counts on.
	hists map[source.NodeID]*probe.Histogram
	// interval is the PING interval in force per node, from the latest
	// topology (0 before one), and fine the nodes probed finer than that
	// (attention follows the save).
	interval time.Duration
	fine     map[source.NodeID]time.Duration
}

// New returns an Exporter that knows no node yet. version is vkwatch's
// own, as --version names it first ("" takes the module version of the
// build info).
func New(version string) *Exporter {
	return &Exporter{build: buildLabels(version), nodes: map[source.NodeID]*node{}, hists: map[source.NodeID]*probe.Histogram{}}
}

// buildLabels are vkwatch_build_info's version, revision and goversion.
func buildLabels(version string) [3]string {
	out := [3]string{version, "unknown", runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	if out[0] == "" {
		out[0] = bi.Main.Version
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			out[1] = s.Value
		}
	}
	for i := range out {
		out[i] = inert.Text(out[i])
	}
	return out
}

// PingHistogram is the histogram node's probe should count its PINGs
// into (watch.Config.PingHistogram), served as
// vkwatch_ping_duration_seconds.
func (e *Exporter) PingHistogram(id source.NodeID) *probe.Histogram {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.hists[id]
	if h == nil {
		h = probe.NewHistogram()
		e.hists[id] = h
	}
	return h
}

func (e *Exporter) nodeLocked(id source.NodeID) *node {
	n := e.nodes[id]
	if n == nil {
		n = newNode(string(id))
		e.nodes[id] = n
	}
	return n
}

// Observe takes one event of the fleet.
func (e *Exporter) Observe(ev source.Event) {
	// The address is a server's text: made inert, it is valid UTF-8 (a
	// label that is not makes the client library panic) and safe for
	// whoever curls the page to a terminal.
	ev = ev.Inert()
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
		if !ev.Stalled {
			// Gone, not silent: what ran is not known to run any more.
			// (A silent server keeps its save, which shows again when it
			// answers.)
			n.save, n.stalled = nil, source.Opt[time.Duration]{}
		}
	case source.EventSample, source.EventSaveStarted:
		if ev.Sample != nil {
			e.nodeLocked(ev.Node).sample(ev.Sample)
		}
	case source.EventSaveEnded:
		if ev.Report != nil {
			e.nodeLocked(ev.Node).report(*ev.Report)
		}
	case source.EventSpike:
		if ev.Spike != nil {
			e.nodeLocked(ev.Node).spike(ev.Spike)
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

func (e *Exporter) intervalOf(id source.NodeID) time.Duration {
	if d, ok := e.fine[id]; ok {
		return d
	}
	return e.interval
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
