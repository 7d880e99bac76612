// Package watch watches one server (Watcher): it samples INFO, times
// PINGs with a probe of its own (package probe), follows saves with a
// tracker (package saves) and sends the user's commands, and hands on what
// it sees as source Events. It sits above source's vocabulary and the
// packages that each do one part.
package watch

import (
	"crypto/tls"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/internal/retime"
	"github.com/vkwatch/vkwatch/source/probe"
)

// Config tunes a Watcher. Zero values take the defaults.
type Config struct {
	Interval       time.Duration // INFO sampling at first (SetInterval changes it); default 200ms
	PingInterval   time.Duration // default 2ms
	ConnectTimeout time.Duration // default 3s: dial+AUTH+first INFO
	CommandTimeout time.Duration // default 10s for Do
	// WriterOps, when set, returns the cumulative count of operations
	// vkwatch's own writers sent to this server; its rate becomes
	// Sample.WriterOpsPerSec.
	WriterOps func() uint64
	// Proc, when set, is called on each sample of a Local endpoint whose
	// INFO reports process_id, and fills Sample.Proc.
	Proc func(pid int64) source.ProcMem
	// PingHistogram, when set, counts every PING round trip of the probe
	// as well (an exporter's histogram, see probe.Histogram).
	PingHistogram *probe.Histogram
	// Sched, when set, reads a Local endpoint's main thread as the kernel
	// sees it (procmem.Reader.Sched) at each sample and while a PING
	// waits past the spike rule's bar, to explain its spikes.
	Sched func(pid int64, at time.Duration, wchan bool) source.ProcSched
	// NoSpikes turns the spike reading off: no spike is looked for, and
	// nothing is read after one (cmd/vkperf measures what it costs).
	NoSpikes bool
	// CostEvery is how often INFO commandstats is read for the observer
	// cost (Sample.Observer); default DefaultCostEvery, negative: never.
	CostEvery time.Duration
}

// DefaultCostEvery is how often the watcher reads INFO commandstats to
// price its own commands: rarely, as the reading costs the server too
// (its reply grows with every command type the server has run).
const DefaultCostEvery = time.Minute

// DefaultInterval is the INFO sampling interval when Config has none.
const DefaultInterval = 200 * time.Millisecond

func (c *Config) defaults() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 2 * time.Millisecond
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 3 * time.Second
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = 10 * time.Second
	}
	if c.CostEvery == 0 {
		c.CostEvery = DefaultCostEvery
	}
}

// Watcher watches one server: it samples INFO, PINGs it on a connection
// of its own, tracks saves and sends the user's commands. Create it with
// New, call Run once, and Close it when done.
type Watcher struct {
	node  source.NodeID
	ep    source.Endpoint
	clock *source.Clock
	cfg   Config

	optsErr error          // why the endpoint's options are unusable (TLS files)
	tlsCfg  *tls.Config    // nil without TLS
	opts    *redis.Options // base options of both clients

	// clientsMu guards the two clients and closed. The sampler's client
	// (INFO, CONFIG GET) and Do's (a BGSAVE never waits behind INFO) are
	// made on first use and each is replaced by a fresh one after a
	// transport error: go-redis's pool otherwise trips a dial circuit
	// breaker that retries only once a second, in a goroutine that
	// outlives Close by up to a second. closed is under the same lock so
	// that no client is made after Close has closed them; closeCh is
	// closed with it and ends a running Run.
	clientsMu sync.Mutex
	sampler   *redis.Client
	cmds      *redis.Client
	closed    bool
	closeCh   chan struct{}

	// pingIvl is the PING interval (ns) asked for, and probe the running
	// probe once there is one: SetPingInterval changes both.
	pingIvl atomic.Int64
	probe   atomic.Pointer[probe.Probe]

	// spikeNormal and spikeBar are the spike rule as the last sample
	// left it (ns; 0 before the minute holds enough PINGs): SpikeBar.
	spikeNormal, spikeBar atomic.Int64

	// ivl is the INFO sampling interval in force: SetInterval changes
	// it and wakes the sampler.
	ivl *retime.Interval

	// ownCmds counts the commands of vkwatch's own that the server
	// executed on these two clients (see ownCounter); with the probe's
	// PINGs they are subtracted from the server's ops.
	ownCmds atomic.Uint64
	// ownByName counts the same by command, for the observer cost (with
	// the probe's PINGs).
	ownByName ownCalls
	// configOneByOne: the server takes one name a CONFIG GET (before 7.0).
	configOneByOne atomic.Bool

	// answersMu guards answers and running: Do keeps its result in
	// answers, for the sampler to take (see takeAnswers), only while Run
	// runs; answered wakes the sampler.
	answersMu sync.Mutex
	answers   []source.CommandResult
	running   bool
	answered  chan struct{}
	// starting counts the commands sent with Do that may start a save
	// (BGSAVE, BGREWRITEAOF) and are not answered yet (see causeFirst);
	// saveSent is when the last of them was sent (a clock offset, ns),
	// 0 before any.
	starting atomic.Int32
	saveSent atomic.Int64
	// configStale: a CONFIG SET went out with Do (the monitor's method
	// switch, answered or not): the next sample reads the settings again
	// rather than up to configEvery later, so what it shows is the server's.
	configStale atomic.Bool
}

// SetPingInterval changes how far apart the watcher's PINGs are, at once
// and without a new connection: the fleet probes a node that saves, or is
// about to, finer than the rest. d <= 0 is ignored.
func (w *Watcher) SetPingInterval(d time.Duration) {
	if d <= 0 {
		return
	}
	w.pingIvl.Store(int64(d))
	if p := w.probe.Load(); p != nil {
		p.SetInterval(d)
	}
}

// PingInterval is the PING interval in force.
func (w *Watcher) PingInterval() time.Duration { return time.Duration(w.pingIvl.Load()) }

// SetInterval changes how far apart the watcher's INFO samples are, from
// the next one on: the fleet samples a node at rest less often than one
// that saves or is about to. d <= 0 is ignored.
func (w *Watcher) SetInterval(d time.Duration) { w.ivl.Set(d) }

// Interval is the INFO sampling interval in force.
func (w *Watcher) Interval() time.Duration { return w.ivl.Get() }

// New prepares a watcher of ep, which every Event names as node.
// Nothing is dialled until Connect or Run.
func New(node source.NodeID, ep source.Endpoint, clock *source.Clock, cfg Config) *Watcher {
	cfg.defaults()
	if clock == nil {
		clock = source.NewClock()
	}
	w := &Watcher{node: node, ep: ep, clock: clock, cfg: cfg, closeCh: make(chan struct{}), answered: make(chan struct{}, 1),
		ivl: retime.New(cfg.Interval)}
	w.pingIvl.Store(int64(cfg.PingInterval))
	opts, err := RedisOptions(ep)
	if err != nil {
		w.optsErr = err
		return w
	}
	QuietRedis()
	w.tlsCfg = opts.TLSConfig
	opts.DialTimeout = cfg.ConnectTimeout
	// One dial per attempt: the watcher has its own backoff and must
	// report a refused connection at once.
	opts.DialerRetries = 1
	// Each call carries its own deadline (INFO short, Do long).
	opts.ContextTimeoutEnabled = true
	opts.ReadTimeout = cfg.CommandTimeout
	opts.WriteTimeout = cfg.CommandTimeout
	// Never resend: a retried BGSAVE could start a second save, and a
	// retried INFO would hide a stall.
	opts.MaxRetries = -1
	// A sample's INFO reply is 4-5 KB, read through the buffer in a
	// read or two (a longer reply is read past it, not cut); the commands
	// sent are a few bytes. Buffers of 16 and 4 KiB, on two connections a
	// node, were 40 of vkwatch's 172 MB live heap at 1,000 nodes.
	opts.ReadBufferSize = 4 << 10
	opts.WriteBufferSize = 1 << 10
	// The pipeline pool (CONFIG GET before 7.0, see configGet) would
	// otherwise take 128 KiB each way per connection.
	opts.PipelineReadBufferSize = 4 << 10
	opts.PipelineWriteBufferSize = 1 << 10
	opts.PoolSize = 2
	w.opts = opts
	return w
}

// Endpoint returns the watched endpoint.
func (w *Watcher) Endpoint() source.Endpoint { return w.ep }

// Node returns the node id the watcher's events carry.
func (w *Watcher) Node() source.NodeID { return w.node }

// Close closes every connection of the watcher and makes a running Run
// return. After Run has returned and Close, no goroutine of the watcher
// remains.
func (w *Watcher) Close() error {
	w.clientsMu.Lock()
	defer w.clientsMu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	close(w.closeCh)
	var errs []error
	for _, c := range []**redis.Client{&w.sampler, &w.cmds} {
		if *c != nil {
			errs = append(errs, (*c).Close())
			*c = nil
		}
	}
	return errors.Join(errs...)
}

func (w *Watcher) isClosed() bool {
	w.clientsMu.Lock()
	defer w.clientsMu.Unlock()
	return w.closed
}
