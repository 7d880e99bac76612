// Package watch watches one server (Watcher): it samples INFO, times
// PINGs with a probe of its own (package probe), follows saves with a
// tracker (package saves) and sends the user's commands, and hands on what
// it sees as source Events. It sits above source's vocabulary and the
// packages that each do one part.
package watch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/internal/queue"
	"github.com/vkwatch/vkwatch/source/internal/retime"
	"github.com/vkwatch/vkwatch/source/probe"
	"github.com/vkwatch/vkwatch/source/saves"
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
}

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
}

// infoArgs are the INFO sections the sampler asks for, in one call (a
// full INFO costs the server more; several sections in one call needs
// Redis 7.0 or later).
var infoArgs = []any{"info", "server", "replication", "memory", "stats", "persistence"}

// infoWithClients adds the clients section while a save runs or one is
// coming (see clientsWanted): its blocked_clients counts the writers a
// forkless save holds up, and a server at rest pays nothing more.
var infoWithClients = append(append([]any(nil), infoArgs...), "clients")

// comingFor is how long after a save command vkwatch sent (BGSAVE,
// BGREWRITEAOF) the sampler keeps asking for the clients section, so
// that the samples around the save's start have blocked_clients: a save
// too short to be seen is over by then.
const comingFor = 3 * time.Second

// connectInfoArgs add, on connecting, the cluster section: one line,
// cluster_enabled, which cannot change while the server runs, so the
// samples after do not ask for it again.
var connectInfoArgs = append(append([]any(nil), infoArgs...), "cluster")

const (
	// infoTimeout bounds one INFO of the sampler: longer than any INFO
	// takes, short enough that a stalled server is reported within ~2 s.
	infoTimeout = 1500 * time.Millisecond
	// configEvery is how often CONFIG GET refreshes Sample.Config.
	configEvery = 2 * time.Second
	// backoffMin and backoffMax bound the wait between reconnects: a
	// restarted server is watched again within 2 s.
	backoffMin = 100 * time.Millisecond
	backoffMax = 500 * time.Millisecond
)

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

	// The sampler's client (INFO, CONFIG GET) and Do's (a BGSAVE never
	// waits behind INFO). Each is replaced by a fresh one after a
	// transport error: go-redis's pool otherwise trips a dial circuit
	// breaker that retries only once a second, in a goroutine that
	// outlives Close by up to a second.
	cmu     sync.Mutex
	sampler *redis.Client
	cmds    *redis.Client

	// pingIvl is the PING interval (ns) asked for, and probe the running
	// probe once there is one: SetPingInterval changes both.
	pingIvl atomic.Int64
	probe   atomic.Pointer[probe.Probe]

	// ivl is the INFO sampling interval in force: SetInterval changes
	// it and wakes the sampler.
	ivl *retime.Interval

	// ownCmds counts the commands of vkwatch's own that the server
	// executed on these two clients (see ownCounter); with the probe's
	// PINGs they are subtracted from the server's ops.
	ownCmds atomic.Uint64

	mu      sync.Mutex
	queue   *queue.Queue[source.Event] // set while Run runs
	closed  bool
	closeCh chan struct{}

	// answers holds the results of Do until the sampler takes them (see
	// takeAnswers); answered wakes it.
	amu      sync.Mutex
	answers  []source.CommandResult
	answered chan struct{}
	// starting counts the commands sent with Do that may start a save
	// (BGSAVE, BGREWRITEAOF) and are not answered yet (see causeFirst);
	// saveSent is when the last of them was sent (a clock offset, ns),
	// 0 before any.
	starting atomic.Int32
	saveSent atomic.Int64
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
	opts.ReadBufferSize = 16 << 10
	opts.WriteBufferSize = 4 << 10
	// The pipeline pool (the sample's INFO and CONFIG GET) would take
	// 128 KiB each way per connection: 25 MB at a hundred nodes. A
	// sample's replies are a few KB.
	opts.PipelineReadBufferSize = 16 << 10
	opts.PipelineWriteBufferSize = 4 << 10
	opts.PoolSize = 2
	w.opts = opts
	return w
}

// quietLogger silences go-redis, which otherwise logs dial failures to
// stderr, right through a terminal UI. Errors reach the user as events.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// QuietRedis silences go-redis's logger for the whole process, as every
// Watcher does: other packages' clients (cluster discovery) call it too.
func QuietRedis() { quietOnce.Do(func() { redis.SetLogger(quietLogger{}) }) }

// client returns the client in *slot, making one if there is none; nil
// once the watcher is closed.
func (w *Watcher) client(slot **redis.Client, poolTimeout time.Duration) *redis.Client {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if w.isClosed() {
		return nil
	}
	if *slot == nil {
		o := *w.opts
		o.PoolTimeout = poolTimeout
		*slot = redis.NewClient(&o)
		(*slot).AddHook(ownCounter{&w.ownCmds})
	}
	return *slot
}

// ownCounter counts, in n, every command of a watcher's client that the
// server executed, and so counted in total_commands_processed: the
// sampler's INFO and CONFIG GET, and the commands go-redis sends to set up
// each new connection (HELLO, AUTH, SELECT), which pass through the
// client's hooks too. A new connection can come at any moment (go-redis
// sends pipelines on a pool of their own; a connection is replaced after an
// error), so only counting them all keeps vkwatch's own commands out of
// the ops/s of every interval, the first one included. An error reply
// means the server refused the command before running it (unknown, NOPERM,
// wrong arity, LOADING) and did not count it; a transport error, that it
// may never have seen it. The user's command sent with Do (marked in its
// context, see userCmd) is not counted: it is load the user asked for.
type ownCounter struct{ n *atomic.Uint64 }

// userCmd is the context key under which Do marks the user's command.
type userCmd struct{}

func executed(cmd redis.Cmder) bool {
	err := cmd.Err()
	return err == nil || errors.Is(err, redis.Nil)
}

func (ownCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h ownCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if executed(cmd) && ctx.Value(userCmd{}) != cmd {
			h.n.Add(1)
		}
		return err
	}
}

func (h ownCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if executed(cmd) {
				h.n.Add(1)
			}
		}
		return err
	}
}

// drop closes c and forgets it if it is still in *slot, so that the next
// call gets a fresh client.
func (w *Watcher) drop(slot **redis.Client, c *redis.Client) {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if *slot == c && c != nil {
		*slot = nil
		c.Close()
	}
}

// transportError reports whether err is not the server's answer: the
// connection behind it is suspect.
func transportError(err error) bool {
	var rerr redis.Error
	return err != nil && !errors.As(err, &rerr) && !errors.Is(err, redis.Nil)
}

// samplerDo sends one command on the sampler's client.
func (w *Watcher) samplerDo(ctx context.Context, args ...any) (string, error) {
	c := w.client(&w.sampler, w.cfg.ConnectTimeout)
	if c == nil {
		return "", redis.ErrClosed
	}
	text, err := c.Do(ctx, args...).Text()
	if transportError(err) {
		w.drop(&w.sampler, c)
	}
	return text, err
}

// Endpoint returns the watched endpoint.
func (w *Watcher) Endpoint() source.Endpoint { return w.ep }

// Node returns the node id the watcher's events carry.
func (w *Watcher) Node() source.NodeID { return w.node }

// ConnectError says why a server could not be reached, in one line:
// "ADDR: cause". Addr is the display form of the endpoint (no password).
type ConnectError struct {
	Addr  string
	Cause string
	Err   error
}

func (e *ConnectError) Error() string { return e.Addr + ": " + e.Cause }

// Unwrap returns the underlying error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Connect makes one attempt, within ConnectTimeout, to dial, log in and
// read INFO, and returns who the server is or a *ConnectError.
func (w *Watcher) Connect(ctx context.Context) (source.Identity, error) {
	id, _, _, err := w.connect(ctx)
	return id, err
}

// connect is Connect that also returns the INFO text and when it arrived.
func (w *Watcher) connect(ctx context.Context) (source.Identity, string, time.Duration, error) {
	if w.optsErr != nil {
		return source.Identity{}, "", 0, &ConnectError{Addr: w.ep.String(), Cause: w.optsErr.Error(), Err: w.optsErr}
	}
	if w.isClosed() {
		return source.Identity{}, "", 0, &ConnectError{Addr: w.ep.String(), Cause: "watcher closed", Err: redis.ErrClosed}
	}
	cctx, cancel := context.WithTimeout(ctx, w.cfg.ConnectTimeout)
	defer cancel()
	text, err := w.samplerDo(cctx, connectInfoArgs...)
	at := w.clock.Offset()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return source.Identity{}, "", 0, &ConnectError{Addr: w.ep.String(), Cause: w.cause(err, w.cfg.ConnectTimeout), Err: err}
	}
	return w.identity(source.ParseInfo(text)), text, at, nil
}

func (w *Watcher) identity(in source.Info) source.Identity {
	name := in.ServerName
	if name == "" {
		name = "redis"
	}
	return source.Identity{
		Addr: w.ep.String(), ServerName: name, Version: in.Version, Role: in.Role,
		ProcessID: in.ProcessID, Local: w.ep.Local(), Cluster: in.ClusterEnabled.V == 1,
	}
}

// cause turns a connection or login error into a short, one-line reason.
func (w *Watcher) cause(err error, timeout time.Duration) string {
	var (
		dnsErr  *net.DNSError
		recErr  tls.RecordHeaderError
		alert   tls.AlertError
		certErr *tls.CertificateVerificationError
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		rerr    redis.Error
		netErr  net.Error
	)
	msg := oneLine(err.Error())
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOENT):
		return "no such socket"
	case errors.Is(err, syscall.EACCES) || errors.Is(err, os.ErrPermission):
		return "permission denied"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "unknown host"
		}
		return "cannot resolve host: " + oneLine(dnsErr.Err)
	case errors.As(err, &recErr), errors.As(err, &alert), errors.As(err, &certErr),
		errors.As(err, &unkAuth), errors.As(err, &hostErr), errors.As(err, &invErr):
		return "TLS handshake failed: " + strings.TrimPrefix(msg, "tls: ")
	case errors.As(err, &rerr):
		text := oneLine(rerr.Error())
		switch {
		case strings.HasPrefix(text, "WRONGPASS"), strings.HasPrefix(text, "ERR invalid password"),
			strings.Contains(text, "AUTH") && strings.Contains(text, "without any password configured"):
			return "authentication failed: " + text
		case strings.HasPrefix(text, "NOAUTH"):
			return "NOAUTH password required"
		case strings.HasPrefix(text, "NOPERM"):
			return "INFO not permitted: " + text
		}
		return text
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		s := "timed out after " + timeout.String()
		if w.tlsCfg != nil {
			s += " (TLS to a plain port?)"
		}
		return s
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by server" + w.closedHint()
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by server" + w.closedHint()
	case errors.Is(err, syscall.EPIPE):
		return "connection closed by server"
	}
	switch {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "TLS handshake failed: " + msg
	case strings.Contains(msg, "remote error: tls: "):
		// The server's alert (crypto/tls wraps it in a *net.OpError of an
		// unexported type), e.g. "certificate required" without --cert.
		return "TLS handshake failed: server says " + msg[strings.Index(msg, "remote error: tls: ")+len("remote error: tls: "):]
	}
	return strings.TrimPrefix(msg, "redis: ")
}

// closedHint guesses why a server hung up at once. A TLS port resets a
// connection whose first bytes are a plain command. A TLS server that
// wants a client certificate ends the connection right after the
// handshake, and its alert is often lost to the reset that our first
// command provokes.
func (w *Watcher) closedHint() string {
	switch {
	case w.tlsCfg == nil:
		return " (plain connection to a TLS port?)"
	case len(w.tlsCfg.Certificates) == 0:
		return " (TLS client certificate required? see --cert and --key)"
	}
	return ""
}

// oneLine keeps the first line of an error text.
func oneLine(s any) string {
	var t string
	switch v := s.(type) {
	case error:
		t = v.Error()
	case string:
		t = v
	default:
		t = fmt.Sprint(v)
	}
	if i := strings.IndexAny(t, "\r\n"); i >= 0 {
		t = t[:i]
	}
	return t
}

// Run watches the server until ctx is done or the watcher is closed. emit
// receives, one call at a time and in order: EventConnected, then an
// EventSample every Interval (or as SetInterval last set it), EventSaveStarted / EventSaveEnded around
// saves, EventDisconnected when the server cannot be reached or stops
// answering (once per outage; Run keeps retrying with backoff capped at
// 500 ms) and EventConnected again when it is back, and EventCommand for
// the results of Do. emit runs on a goroutine of its own, so a slow emit
// never delays sampling; Run returns after the emit call in progress has.
// Run must not be called twice at the same time.
//
// Sample.OpsPerSec is the delta of total_commands_processed between two
// samples, minus the commands vkwatch itself sent in that time (the
// probe's answered PINGs, the sampler's INFO and CONFIG GET, and the
// set-up of every connection of the watcher, see ownCounter), divided
// by the monotonic time between the two INFO replies. It is absent on the
// first sample after a (re)connect and after a restart of the server
// (uptime drop or new process id). Commands sent with Do are not
// subtracted: they are the user's.
func (w *Watcher) Run(ctx context.Context, emit func(source.Event)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	// Close ends Run.
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-w.closeCh:
			cancel()
		case <-ctx.Done():
		}
	}()

	q := queue.New[source.Event]()
	w.mu.Lock()
	w.queue = q
	w.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		emitQueued(ctx, q, emit)
	}()
	defer func() {
		w.mu.Lock()
		w.queue = nil
		w.mu.Unlock()
		cancel()
		wg.Wait()
	}()

	s := &sampling{w: w, q: q, tracker: saves.NewTracker(w.node, w.ep.String())}
	s.loop(ctx, &wg)
}

// sampling is the state of one Run.
type sampling struct {
	w       *Watcher
	q       *queue.Queue[source.Event]
	tracker *saves.Tracker
	probe   *probe.Probe

	seq        uint64
	id         source.Identity
	prev       *source.Info // the previous sample's INFO, nil after a (re)connect
	prevAt     time.Duration
	prevOwn    uint64
	prevWriter uint64
	opsCarry   float64 // commands over-subtracted so far (<= 0)
	config     source.SaveConfig
	configAt   time.Duration
	haveConfig bool
	lastAnswer time.Duration // when INFO last answered
}

// loop samples until ctx ends: while the server cannot be reached it
// reconnects with backoff, then it takes one INFO a tick.
func (s *sampling) loop(ctx context.Context, wg *sync.WaitGroup) {
	w := s.w
	tick := time.NewTimer(time.Hour)
	defer tick.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	backoff := backoffMin
	connected, down, stalled := false, false, false
	for ctx.Err() == nil {
		if !connected {
			text, at, err := s.connect(ctx, wg)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				if !down {
					s.push(source.Event{Kind: source.EventDisconnected, Err: connectReason(err)})
					down = true
				}
				if !s.wait(ctx, timer, backoff) {
					return
				}
				backoff = min(2*backoff, backoffMax)
				continue
			}
			connected, down, stalled, backoff = true, false, false, backoffMin
			s.sample(ctx, text, at)
			tick.Reset(sampleWait(probe.Now(), w.Interval(), w.PingInterval()))
		}
		select {
		case <-tick.C:
			// Armed before the INFO: a reply slower than the interval
			// is followed by the next sample at once, as a ticker would.
			tick.Reset(sampleWait(probe.Now(), w.Interval(), w.PingInterval()))
		case <-w.ivl.Changed():
			// The next sample on the new interval's grid: sooner when it
			// is finer (a save coming), later when it is coarser.
			tick.Reset(sampleWait(probe.Now(), w.Interval(), w.PingInterval()))
			continue
		case <-w.answered:
			s.answers()
			continue
		case <-ctx.Done():
			return
		}
		args := infoArgs
		if s.clientsWanted() {
			args = infoWithClients
		}
		ictx, cancel := context.WithTimeout(ctx, infoTimeout)
		text, err := w.samplerDo(ictx, args...)
		cancel()
		at := w.clock.Offset()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if isTimeout(err) {
				// The server is alive but not answering (DEBUG SLEEP, a
				// huge command, SIGSTOP). Keep the connection state and
				// everything sampled so far; say how long it has been.
				stalled = true
				silent := (at - s.lastAnswer).Round(100 * time.Millisecond)
				s.push(source.Event{Kind: source.EventDisconnected, Stalled: true, Err: "not answering for " + silent.String()})
				continue
			}
			connected, down = false, true
			s.push(source.Event{Kind: source.EventDisconnected, Err: w.cause(err, infoTimeout)})
			continue
		}
		if stalled {
			stalled = false
			s.resumed(text)
		}
		s.causeFirst(ctx)
		s.sample(ctx, text, at)
	}
}

// clientsWanted says whether the next INFO asks for the clients section:
// while the last sample shows a save or rewrite running, or one coming
// (an AOF rewrite scheduled, a replica waiting for a full sync: what the
// fleet's attention follows too), and for comingFor after vkwatch sent a
// save command. Not between saves: an idle server is asked no more.
func (s *sampling) clientsWanted() bool {
	if s.w.starting.Load() > 0 {
		return true
	}
	if at := s.w.saveSent.Load(); at > 0 && s.w.clock.Offset()-time.Duration(at) < comingFor {
		return true
	}
	in := s.prev
	if in == nil {
		return false
	}
	_, running := source.SaveKindOf(in)
	return running || in.AOFRewriteScheduled.V == 1 || in.ReplicasWaitingBGSave > 0
}

// connect (re)connects the sampler. Connected, the sampling starts afresh
// (no ops rate across the gap, the save configuration asked again) and the
// probe runs; text and at are the first INFO and when it answered.
func (s *sampling) connect(ctx context.Context, wg *sync.WaitGroup) (text string, at time.Duration, err error) {
	id, text, at, err := s.w.connect(ctx)
	if err != nil || ctx.Err() != nil {
		return text, at, err
	}
	s.id = id
	s.prev, s.opsCarry = nil, 0
	s.haveConfig = false
	s.push(source.Event{Kind: source.EventConnected, Identity: &id})
	if s.probe == nil {
		w := s.w
		s.probe = probe.New(w.ep, w.tlsCfg, w.PingInterval(), w.cfg.ConnectTimeout, w.cfg.Interval)
		s.probe.CountInto(w.cfg.PingHistogram)
		w.probe.Store(s.probe)
		// A SetPingInterval between the two lines above counts.
		s.probe.SetInterval(w.PingInterval())
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.probe.Run(ctx)
		}()
	}
	return text, at, nil
}

// connectReason is what EventDisconnected says of a failed connect: the
// cause alone where there is one.
func connectReason(err error) string {
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ce.Cause
	}
	return err.Error()
}

// resumed says the server answers again after a stall, with the identity
// its INFO gives now.
func (s *sampling) resumed(text string) {
	id := s.w.identity(source.ParseInfo(text))
	id.Cluster = s.id.Cluster // asked on connecting only
	s.id = id
	s.push(source.Event{Kind: source.EventConnected, Identity: &id})
}

// causeFirst hands the save tracker the answers of vkwatch's own commands
// before the sample that may show their effect. A BGSAVE forks before it
// answers, on a connection of its own: the sampler's INFO can show the
// save running, or already over, before Do has queued the answer. Taken
// after the sample, the answer would come too late for a save that ran
// whole between two samples, and vkwatch's own save would be reported as
// another client's. So a save command still in flight is waited for, up to
// causeWait (its answer follows the fork at once; a server too slow for
// that is stalled, and the sample goes on without it).
func (s *sampling) causeFirst(ctx context.Context) {
	if s.w.starting.Load() > 0 {
		timer := time.NewTimer(causeWait)
		defer timer.Stop()
		for s.w.starting.Load() > 0 {
			select {
			case <-s.w.answered:
			case <-timer.C:
				s.answers()
				return
			case <-ctx.Done():
				return
			}
		}
	}
	s.answers()
}

// causeWait bounds how long a sample waits for the answer of a save
// command in flight (see causeFirst).
const causeWait = time.Second

// sampleWait is how long after now (probe.Now) the sampler's next grid
// point is: a multiple of the interval from the probes' epoch (probe.Now's
// zero), shifted by half the greatest common divisor of the interval and
// the PING interval. Every sampler of the process with the same intervals
// wakes at the same moment (a fleet's samplers cost one wake-up between
// them, not one each), and no sample falls on a PING of the probe's grid
// (multiples of the PING interval from the same epoch): the two stay at
// least half that divisor apart (1 ms at the defaults, 2 ms and 200 ms;
// 4 ms for a fleet PINGing every 16 ms). An INFO arriving with vkwatch's
// own PING would delay it and show vkwatch's INFO as the server's latency.
func sampleWait(now int64, interval, ping time.Duration) time.Duration {
	iv := int64(interval)
	phase := int64(0)
	if ping > 0 {
		phase = gcd(iv, int64(ping)) / 2
	}
	if now < phase {
		return time.Duration(phase - now)
	}
	return time.Duration(((now-phase)/iv+1)*iv + phase - now)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// sample turns one INFO reply, received at offset at, into a Sample and
// its save events.
func (s *sampling) sample(ctx context.Context, text string, at time.Duration) {
	w := s.w
	s.lastAnswer = at
	smp := &source.Sample{Seq: s.seq, Offset: at, At: w.clock.At(at)}
	s.seq++
	if s.prev != nil {
		// Reuse the previous strings (see ParseInfoInto).
		smp.Info = *s.prev
	}
	source.ParseInfoInto(&smp.Info, text)
	in := &smp.Info

	if s.probe != nil {
		// First: the summary has the probe read the replies that have
		// arrived, so that the PINGs the server ran before this INFO are
		// in answered (a reply is otherwise read at the probe's next
		// tick, and the first interval would charge it to the server).
		smp.Ping, smp.Ping10s = s.probe.Summary()
	}
	own := w.ownCmds.Load()
	if s.probe != nil {
		own += s.probe.Answered()
	}
	var writer uint64
	if w.cfg.WriterOps != nil {
		writer = w.cfg.WriterOps()
	}
	if p := s.prev; p != nil && !source.Restarted(p, in) {
		dt := (at - s.prevAt).Seconds()
		if dt > 0 {
			if in.TotalCommands.OK && p.TotalCommands.OK {
				// A PING answered around the INFO may be counted by the
				// server in one interval and by us in the next: carry a
				// negative difference over instead of clamping it, so
				// the rate has no bias and is never negative.
				d := float64(in.TotalCommands.V-p.TotalCommands.V-int64(own-s.prevOwn)) + s.opsCarry
				s.opsCarry = min(d, 0)
				smp.OpsPerSec = source.Some(max(d, 0) / dt)
			}
			if w.cfg.WriterOps != nil && writer >= s.prevWriter {
				smp.WriterOpsPerSec = source.Some(float64(writer-s.prevWriter) / dt)
			}
		}
	}
	s.prev, s.prevAt, s.prevOwn, s.prevWriter = in, at, own, writer

	if w.cfg.Proc != nil && w.ep.Local() && in.ProcessID.OK {
		smp.Proc = w.cfg.Proc(in.ProcessID.V)
	}
	if !s.haveConfig || at-s.configAt >= configEvery {
		s.config = w.readConfig(ctx)
		s.configAt, s.haveConfig = at, true
	}
	smp.Config = s.config

	// Answers that came before this INFO reply go to the tracker first, in
	// the order a recording keeps them. The tracker derives the rest of the
	// sample (its instruments and save progress), as a recording's reader
	// does again.
	s.answers()
	started, ended := s.tracker.Observe(smp)
	s.push(source.Event{Kind: source.EventSample, Offset: at, Sample: smp})
	if started {
		s.push(source.Event{Kind: source.EventSaveStarted, Offset: at, Sample: smp})
	}
	if ended != nil {
		s.push(source.Event{Kind: source.EventSaveEnded, Offset: at, Report: ended})
	}
}

// configNames are the settings readConfig asks for, in one round trip.
var configNames = [...]string{
	"bgsave-default-method", "forkless-infrastructure-enabled", "rdb-key-save-delay",
	"repl-diskless-sync", "save", "auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size",
	"client-output-buffer-limit", "disable-thp",
}

// readConfig asks for the save settings (one CONFIG GET per name, pipelined
// in one round trip: one CONFIG GET of several names needs 7.0). A server
// that lacks a setting answers nothing for it: absent. An error (NOPERM) is
// kept in Err.
func (w *Watcher) readConfig(ctx context.Context) source.SaveConfig {
	cctx, cancel := context.WithTimeout(ctx, infoTimeout)
	defer cancel()
	names := &configNames
	var cmds [len(configNames)]*redis.MapStringStringCmd
	var c source.SaveConfig
	client := w.client(&w.sampler, w.cfg.ConnectTimeout)
	if client == nil {
		c.Err = redis.ErrClosed.Error()
		return c
	}
	_, err := client.Pipelined(cctx, func(p redis.Pipeliner) error {
		for i, n := range names {
			cmds[i] = p.ConfigGet(cctx, n)
		}
		return nil
	})
	if transportError(err) {
		w.drop(&w.sampler, client)
	}
	if err != nil {
		c.Err = oneLine(err)
		return c
	}
	val := func(i int) (string, bool) {
		v, ok := cmds[i].Val()[names[i]]
		return v, ok
	}
	yesNo := func(i int) source.Opt[bool] {
		v, _ := val(i)
		switch strings.ToLower(v) {
		case "yes":
			return source.Some(true)
		case "no":
			return source.Some(false)
		}
		return source.Opt[bool]{}
	}
	num := func(i int) source.Opt[int64] {
		if v, ok := val(i); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return source.Some(n)
			}
		}
		return source.Opt[int64]{}
	}
	c.Method, _ = val(0)
	c.ForklessInfra = yesNo(1)
	c.RDBKeySaveDelay = num(2)
	c.ReplDisklessSync = yesNo(3)
	if v, ok := val(4); ok {
		c.SaveSchedule = source.Some(v)
	}
	c.AutoAOFRewritePerc = num(5)
	c.AutoAOFRewriteMinSize = num(6)
	if v, ok := val(7); ok {
		c.ReplicaBufHard, c.ReplicaBufSoft, c.ReplicaBufSoftSecs = ReplicaBufferLimit(v)
	}
	c.DisableTHP = yesNo(8)
	return c
}

// ReplicaBufferLimit reads the replica class of a
// client-output-buffer-limit value, "normal 0 0 0 slave 268435456
// 67108864 60 pubsub 33554432 8388608 60" (Valkey may say replica):
// hard and soft limits in bytes and the soft limit's seconds; all absent
// when the value has no such class or is not what it should be.
func ReplicaBufferLimit(v string) (hard, soft, secs source.Opt[int64]) {
	f := strings.Fields(v)
	for i := 0; i+3 < len(f); i += 4 {
		if c := strings.ToLower(f[i]); c != "slave" && c != "replica" {
			continue
		}
		var n [3]int64
		for j := range n {
			x, err := strconv.ParseInt(f[i+1+j], 10, 64)
			if err != nil || x < 0 {
				return
			}
			n[j] = x
		}
		return source.Some(n[0]), source.Some(n[1]), source.Some(n[2])
	}
	return
}

// wait waits d before the next attempt to connect, passing on command
// answers meanwhile; false when ctx ended first.
func (s *sampling) wait(ctx context.Context, timer *time.Timer, d time.Duration) bool {
	timer.Reset(d)
	for {
		select {
		case <-timer.C:
			return true
		case <-s.w.answered:
			s.answers()
		case <-ctx.Done():
			return false
		}
	}
}

// answers hands the command results that arrived since the last call to
// the save tracker and on as EventCommand, from the sampler's goroutine, so
// that the tracker and a recording see commands and samples in one order.
func (s *sampling) answers() {
	for _, r := range s.w.takeAnswers() {
		s.tracker.ObserveCommand(&r)
		s.push(source.Event{Kind: source.EventCommand, Offset: r.Done, Command: &r})
	}
}

func (s *sampling) push(ev source.Event) {
	ev.Node = s.w.node
	if ev.Offset == 0 {
		ev.Offset = s.w.clock.Offset()
	}
	ev.At = s.w.clock.At(ev.Offset)
	s.q.Push(ev)
}

// Do sends a command (e.g. "BGSAVE", "BGREWRITEAOF") on a connection of
// its own (neither the probe's nor the sampler's, so it never delays
// either), bounded by CommandTimeout. It returns the result, with the
// server's own error text verbatim in Err, and also emits it as an
// EventCommand through Run's emit when Run is running: the sampler's
// goroutine emits it (at once, or after the INFO call in flight), having
// shown it to the save tracker first.
func (w *Watcher) Do(ctx context.Context, args ...string) source.CommandResult {
	sent, _ := w.clock.Now()
	res := source.CommandResult{Command: commandText(args), Sent: sent}
	starts := mayStartSave(args)
	if starts {
		w.starting.Add(1)
		w.saveSent.Store(max(int64(sent), 1))
	}
	switch {
	case len(args) == 0:
		res.Err = "empty command"
	case w.optsErr != nil:
		res.Err = w.optsErr.Error()
	default:
		cctx, cancel := context.WithTimeout(ctx, w.cfg.CommandTimeout)
		a := make([]any, len(args))
		for i, v := range args {
			a[i] = v
		}
		var val any
		err := error(redis.ErrClosed)
		if c := w.client(&w.cmds, w.cfg.CommandTimeout); c != nil {
			cmd := redis.NewCmd(cctx, a...)
			_ = c.Process(context.WithValue(cctx, userCmd{}, cmd), cmd)
			val, err = cmd.Result()
			if transportError(err) {
				w.drop(&w.cmds, c)
			}
		}
		cancel()
		var rerr redis.Error
		switch {
		case err == nil:
			res.Reply = replyText(val)
		case errors.As(err, &rerr):
			res.Err = rerr.Error()
		case errors.Is(err, redis.Nil):
			res.Reply = "(nil)"
		case isTimeout(err):
			// Sent and not answered: a stalled server may still run it
			// when it wakes up (a BGSAVE then shows as a save).
			res.Err = "timed out after " + w.cfg.CommandTimeout.String() + "; the server may still run it when it answers"
		default:
			res.Err = w.cause(err, w.cfg.CommandTimeout)
		}
	}
	res.Done = w.clock.Offset()
	w.mu.Lock()
	running := w.queue != nil
	w.mu.Unlock()
	if running {
		w.amu.Lock()
		w.answers = append(w.answers, res)
		w.amu.Unlock()
	}
	if starts {
		// After the answer is queued and before the wake-up, so that
		// causeFirst, woken and seeing none in flight, finds it.
		w.starting.Add(-1)
	}
	if running {
		select {
		case w.answered <- struct{}{}:
		default:
		}
	}
	return res
}

// mayStartSave reports whether a command sent with Do may start a save
// (BGSAVE CANCEL ends one and is not counted).
func mayStartSave(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch strings.ToUpper(args[0]) {
	case "BGSAVE":
		return len(args) == 1 || !strings.EqualFold(args[1], "CANCEL")
	case "BGREWRITEAOF":
		return true
	}
	return false
}

// takeAnswers returns and forgets the results of Do not yet taken.
func (w *Watcher) takeAnswers() []source.CommandResult {
	w.amu.Lock()
	defer w.amu.Unlock()
	a := w.answers
	w.answers = nil
	return a
}

// isTimeout reports whether err is a deadline that passed: the server is
// there but did not answer in time.
func isTimeout(err error) bool {
	var nerr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout()
}

// commandText is the command as shown to the user; an AUTH's arguments
// are hidden.
func commandText(args []string) string {
	if len(args) > 0 && strings.EqualFold(args[0], "AUTH") {
		return args[0] + " xxxxx"
	}
	return strings.Join(args, " ")
}

func replyText(v any) string {
	switch r := v.(type) {
	case string:
		return r
	case int64:
		return strconv.FormatInt(r, 10)
	case nil:
		return "(nil)"
	}
	return fmt.Sprint(v)
}

// Close closes every connection of the watcher and makes a running Run
// return. After Run has returned and Close, no goroutine of the watcher
// remains.
func (w *Watcher) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	close(w.closeCh)
	w.mu.Unlock()
	w.cmu.Lock()
	defer w.cmu.Unlock()
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
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// emitQueued emits the events q hands over from the sampler and from Do,
// in order, until ctx is done: the one goroutine that calls emit, so a
// sender never waits for it.
func emitQueued(ctx context.Context, q *queue.Queue[source.Event], emit func(source.Event)) {
	var batch []source.Event
	for {
		batch = q.Swap(batch)
		for i := range batch {
			if ctx.Err() != nil {
				return
			}
			emit(batch[i])
			batch[i] = source.Event{}
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-q.Ready():
		case <-ctx.Done():
			return
		}
	}
}
