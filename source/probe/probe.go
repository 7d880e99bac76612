// Package probe times a server's PING round trips on a connection of its
// own (Probe), for the watcher's Sample.Ping and Sample.Ping10s. On Linux
// every probe of the process is served by one loop (probe_loop_linux.go),
// so that PINGs due at the same moment cost one wake-up between them.
package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/internal/retime"
)

// Probe histogram range and precision. Latencies are recorded in
// microseconds from 1 µs to 60 s with two significant digits (1 %): a
// histogram is then ~20 KB, so the 10 s ring of a 200 ms sampler stays near
// 1 MB. Min and Max are tracked exactly beside the histogram.
const (
	probeHistLowest  = 1
	probeHistHighest = int64(60 * time.Second / time.Microsecond)
	probeHistDigits  = 2

	// probeReadTimeout is how long one PING may go unanswered before the
	// connection is given up. It is long on purpose: a frozen server must
	// show as a growing InFlight, not as a storm of reconnects.
	probeReadTimeout = 30 * time.Second
	// probeWindow is the span of Sample.Ping10s.
	probeWindow = 10 * time.Second
)

// pingCmd is PING in RESP, written as is on every probe.
var pingCmd = []byte("*1\r\n$4\r\nPING\r\n")

// Probe measures PING round trips on a connection of its own, so that
// nothing else (INFO, a BGSAVE sent by the user) waits in front of a PING
// or behind one. PINGs are scheduled on intended start times, like a
// ticker: the n-th PING is due at start + n*interval. A PING that takes
// longer than the interval delays the ones due meanwhile; they are counted
// through coordinated-omission correction (HdrHistogram's
// RecordCorrectedValue) instead of being silently skipped, so a 500 ms
// stall weighs as the 250 PINGs it held up, not as one.
type Probe struct {
	ep          source.Endpoint
	spread      uint32 // the node's place in the PINGs of an interval (Phase)
	tlsConfig   *tls.Config
	dialTimeout time.Duration
	// ivl is the PING interval. It changes while the probe runs (the
	// fleet's attention follows a save: SetInterval), and wakes the
	// goroutine loop when it does.
	ivl *retime.Interval

	// answered counts the probe's commands the server has executed (PINGs
	// and AUTH): they are in total_commands_processed and are subtracted
	// from the server's ops/s.
	answered atomic.Uint64
	// sentAt is the time (Now) the unanswered PING was sent, 0 when
	// none is outstanding.
	sentAt atomic.Int64
	// shared is the probe's connection on the shared loop, nil while it
	// has none (probe_loop_linux.go).
	shared atomic.Pointer[loopConn]
	// total counts every round trip since the probe began, for an
	// exporter (nil when none asked: CountInto); Summary counts each
	// interval in.
	total *Histogram
	// counter counts every interval Summary closes too (the spike
	// rule's baseline; nil when none asked: CountIntervals).
	counter IntervalCounter
	// stallAfter is how long a PING may go unanswered before onStall is
	// told (see OnStall), in ns; 0 tells nothing.
	stallAfter atomic.Int64
	onStall    func(sent int64)
	// late is how late a PING was sent at worst (ns) since the last
	// Summary: vkwatch's own scheduling delay.
	late atomic.Int64

	mu      sync.Mutex    // guards cur, curMin, curMax, curWorst, lastErr
	cur     *probeSlot    // the interval being recorded
	curMin  time.Duration // exact extremes of the real round trips
	curMax  time.Duration
	lastErr string
	// curWorst is the interval's slowest round trip: when it was sent
	// and whether the kernel timed its answer.
	curWorst Worst
	// last is what Summary closed last (one goroutine: the sampler).
	last Worst

	// Used by Summary only (one goroutine: the sampler). A probe keeps no
	// histogram of its own: each interval keeps its round trips (rtts),
	// and Summary sums the interval and the window into histograms
	// borrowed from histPool for the moment (three histograms of 20 KB
	// each were most of vkwatch's memory in a fleet: 66 MB at 1,000 nodes).
	ring []probeSlot
	head int
}

// histPool lends Summary the histograms it sums an interval and the
// window into: as many as samplers run at once, not three a probe.
var histPool = sync.Pool{New: func() any { return newProbeHist() }}

// Worst is an interval's slowest PING beyond its round trip (Summary's
// Max): what explaining a spike needs.
type Worst struct {
	// Sent is when it was sent (Now).
	Sent int64
	// Stamped says the kernel's receive timestamp timed its answer, so
	// vkwatch's own lateness in reading it could not lengthen it.
	Stamped bool
	// Late is how late a PING of the interval was sent at worst: how far
	// behind its schedule vkwatch's probe ran (it lengthens no round
	// trip, which is timed from the send).
	Late time.Duration
}

// IntervalCounter counts the round trips of every interval a probe's
// Summary closes: its end (Now), its round trips in µs, and the PING
// interval in µs they are corrected for coordinated omission with (see
// spike.Baseline).
type IntervalCounter interface {
	Interval(end int64, rtts []int64, ivUS int64)
}

// CountIntervals makes Summary count every interval it closes into c as
// well; call it before Run. An interval whose log overflowed counts the
// round trips logged.
func (p *Probe) CountIntervals(c IntervalCounter) { p.counter = c }

// OnStall has fn told, on the probe's own goroutine, each time a PING has
// gone unanswered SetStallAfter's time, then twice, four times... that,
// at most maxStallCalls times a PING; sent is when it was sent (Now). fn
// must be quick (a few small reads of /proc): other probes' PINGs wait
// for it. Call it before Run.
func (p *Probe) OnStall(fn func(sent int64)) { p.onStall = fn }

// SetStallAfter sets the time OnStall's fn waits for (the spike rule's bar
// as it stands); 0 or less turns it off.
func (p *Probe) SetStallAfter(d time.Duration) { p.stallAfter.Store(max(int64(d), 0)) }

// maxStallCalls bounds OnStall's calls for one PING: at twice the time
// each, eight reach 256 times the bar (half a second at the 2 ms floor).
const maxStallCalls = 8

// stall tracks OnStall's calls for the PING in flight.
type stall struct {
	next  int64 // its age at the next call, 0 when none is due
	calls int
}

// begin arms s for a PING just sent.
func (s *stall) begin(p *Probe) { s.next, s.calls = p.stallAfter.Load(), 0 }

// check tells p's fn if the PING sent at sent has waited long enough.
// Until its first call the time is SetStallAfter's now, not at the send: a
// PING sent before the spike rule had its first bar, and held by a server
// stopped then, was never told of (seen in a test; the goroutine's loop
// wakes only at its begin's time, so there the send's time holds).
func (s *stall) check(p *Probe, sent, now int64) {
	if s.calls == 0 {
		s.next = p.stallAfter.Load()
	}
	if s.next <= 0 || p.onStall == nil || now-sent < s.next {
		return
	}
	p.onStall(sent)
	s.calls++
	s.next *= 2
	if s.calls >= maxStallCalls {
		s.next = 0
	}
}

// noteLate records that a PING due at due was sent at now.
func (p *Probe) noteLate(due, now int64) {
	d := now - due
	for {
		cur := p.late.Load()
		if d <= cur || p.late.CompareAndSwap(cur, d) {
			return
		}
	}
}

// LastWorst is the slowest PING of the interval Summary closed last; call
// it after Summary, on the same goroutine.
func (p *Probe) LastWorst() Worst { return p.last }

// probeSlot is one interval, being recorded or finished and kept for the
// rolling summary.
type probeSlot struct {
	hist     *hdrhistogram.Histogram // only when overflow: every round trip, the log's first ones included
	count    int64                   // round trips recorded, corrections included
	min, max time.Duration
	end      time.Duration // Now when the interval was closed
	used     bool
	// rtts are the round trips (µs, clamped), in order: the interval's
	// summary and the window's are recorded from them (recording the
	// window's few thousand values costs less than merging its
	// histograms' buckets did, 0.3 ms a sample).
	rtts     []int64
	ivUS     int64 // the PING interval (µs) its rtts are corrected with
	overflow bool  // more round trips than probeSlotLog: rtts is incomplete, hist has them all
}

// probeSlotLog bounds a slot's rtts (128 KB): an interval that goes on
// longer (the sampler waiting for a slow INFO while PINGs are answered)
// keeps a histogram of its own instead.
const probeSlotLog = 1 << 14

// New prepares a probe; sampleEvery sizes the ring of intervals kept
// for the rolling 10 s summary.
func New(ep source.Endpoint, tlsConfig *tls.Config, interval, dialTimeout, sampleEvery time.Duration) *Probe {
	if sampleEvery <= 0 {
		sampleEvery = 200 * time.Millisecond
	}
	// One more slot than the window needs: intervals may be shorter than
	// planned (a sample after a reconnect).
	n := int(probeWindow/sampleEvery) + 2
	if n > 512 {
		n = 512
	}
	p := &Probe{
		ep: ep, spread: Spread(ep.String()), tlsConfig: tlsConfig, dialTimeout: dialTimeout,
		ivl:  retime.New(interval),
		ring: make([]probeSlot, n),
	}
	// Room for the PINGs of an interval, so that recording a fine probe
	// does not allocate once running; a coarse one (a few PINGs a
	// sample, a big fleet's) grows its slots as they fill, once.
	if interval > 0 && sampleEvery/interval >= 8 {
		perSlot := int(min(int64(sampleEvery/interval)*5/4+16, probeSlotLog))
		for i := range p.ring {
			p.ring[i].rtts = make([]int64, 0, perSlot)
		}
	}
	p.cur = &p.ring[0]
	return p
}

func newProbeHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(probeHistLowest, probeHistHighest, probeHistDigits)
}

// probeEpoch is the origin of every probe's clock, so that one loop can
// serve many probes with one reading of the clock.
var probeEpoch = time.Now()

// Now is the monotonic time in ns since probeEpoch. The PINGs are due on
// grids counted from it, and the watcher sets its sampling grid on the
// same clock, so that no sample falls on a PING.
func Now() int64 { return int64(time.Since(probeEpoch)) }

func (p *Probe) now() int64 { return Now() }

// Run PINGs until ctx is done, reconnecting with backoff (100 ms doubling
// to 500 ms) when the connection breaks.
func (p *Probe) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for ctx.Err() == nil {
		conn, err := p.dial(ctx)
		if err == nil {
			backoff = 100 * time.Millisecond
			p.setErr("")
			err = p.serve(ctx, conn, timer)
		}
		if ctx.Err() != nil {
			return
		}
		p.setErr(err.Error())
		timer.Reset(backoff)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

func (p *Probe) setErr(s string) {
	p.mu.Lock()
	p.lastErr = s
	p.mu.Unlock()
}

// dial opens the probe's connection and logs in.
func (p *Probe) dial(ctx context.Context) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, p.dialTimeout)
	defer cancel()
	var d net.Dialer
	network := p.ep.Network
	if network == "" {
		network = "tcp"
	}
	conn, err := d.DialContext(dctx, network, p.ep.Addr)
	if err != nil {
		return nil, err
	}
	if p.tlsConfig != nil {
		tc := tls.Client(conn, p.tlsConfig)
		if err := tc.HandshakeContext(dctx); err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	if p.ep.Password != "" {
		deadline, _ := dctx.Deadline()
		conn.SetDeadline(deadline)
		args := []string{"AUTH", p.ep.Password}
		if p.ep.Username != "" {
			args = []string{"AUTH", p.ep.Username, p.ep.Password}
		}
		if _, err := conn.Write(respCommand(args...)); err != nil {
			conn.Close()
			return nil, err
		}
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			conn.Close()
			return nil, err
		}
		if len(line) > 0 && line[0] == '-' {
			conn.Close()
			return nil, errors.New(trimCRLF(line[1:]))
		}
		p.answered.Add(1)
		conn.SetDeadline(time.Time{})
	}
	return conn, nil
}

// respCommand encodes a command as a RESP array of bulk strings.
func respCommand(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

func trimCRLF(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// serve PINGs on conn until it fails or ctx is done, and closes conn. A
// plain TCP or unix connection joins the process's shared probe loop
// (probe_loop_linux.go) where there is one; a TLS connection, or any
// connection where there is none, gets a goroutine of its own.
func (p *Probe) serve(ctx context.Context, conn net.Conn, timer *time.Timer) error {
	if served, err := serveShared(ctx, p, conn); served {
		return err
	}
	defer conn.Close()
	return p.pingLoop(ctx, conn, timer)
}

// pingLoop sends one PING per interval on a goroutine of its own until the
// connection fails or ctx is done. It does not allocate per PING.
func (p *Probe) pingLoop(ctx context.Context, conn net.Conn, timer *time.Timer) error {
	// A blocked Read must end when ctx does.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var buf [128]byte
	var st stall
	next := p.now()
	for {
		if wait := next - p.now(); wait > 0 {
			timer.Reset(time.Duration(wait))
			select {
			case <-timer.C:
			case <-p.ivl.Changed():
				// A shorter interval brings the next PING forward.
				next = min(next, p.now()+int64(p.ivl.Get()))
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		start := p.now()
		p.noteLate(next, start)
		p.sentAt.Store(start)
		conn.SetDeadline(probeEpoch.Add(time.Duration(start) + probeReadTimeout))
		if _, err := conn.Write(pingCmd); err != nil {
			p.sentAt.Store(0)
			return err
		}
		st.begin(p)
		// Read up to the end of the reply line; the reply (+PONG, or an
		// error such as -LOADING) is a single line.
		for {
			if st.next > 0 {
				// Wake when the PING has waited long enough for OnStall.
				conn.SetReadDeadline(probeEpoch.Add(time.Duration(start + st.next)))
			}
			n, err := conn.Read(buf[:])
			if n > 0 && buf[n-1] == '\n' {
				break
			}
			if err != nil && st.next > 0 && isTimeout(err) && p.now()-start < int64(probeReadTimeout) {
				st.check(p, start, p.now())
				if st.next == 0 {
					conn.SetReadDeadline(probeEpoch.Add(time.Duration(start) + probeReadTimeout))
				}
				continue
			}
			if err != nil {
				p.sentAt.Store(0)
				if errors.Is(err, io.EOF) {
					return errors.New("connection closed by server")
				}
				return err
			}
		}
		end := p.now()
		p.sentAt.Store(0)
		p.answered.Add(1)
		p.record(time.Duration(end-start), start, false)
		// The next PING is due one interval after this one was due (not
		// after it was sent: timer lateness must not add up). When this
		// one overran, the PINGs missed are accounted for by the
		// correction in record, so start afresh instead of a burst.
		next += int64(p.ivl.Get())
		if next < end {
			next = end
		}
	}
}

// isTimeout reports whether err is a deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// record adds one round trip, sent at sent (Now), to the current
// interval; stamped says the kernel timed its answer.
func (p *Probe) record(rtt time.Duration, sent int64, stamped bool) {
	us := int64(rtt / time.Microsecond)
	us = min(max(us, probeHistLowest), probeHistHighest)
	p.mu.Lock()
	if c := p.cur; len(c.rtts) < probeSlotLog {
		c.rtts = append(c.rtts, us)
	} else {
		iv := p.intervalUS()
		if !c.overflow {
			c.overflow, c.hist = true, newProbeHist()
			for _, v := range c.rtts {
				_ = c.hist.RecordCorrectedValue(v, iv)
			}
		}
		// Out-of-range values were clamped, so this cannot fail.
		_ = c.hist.RecordCorrectedValue(us, iv)
	}
	if p.curMin == 0 || rtt < p.curMin {
		p.curMin = rtt
	}
	if rtt > p.curMax {
		p.curMax = rtt
		p.curWorst.Sent, p.curWorst.Stamped = sent, stamped
	}
	p.mu.Unlock()
}

// CountInto makes the probe count every round trip into h as well, from
// now on; call it before Run.
func (p *Probe) CountInto(h *Histogram) { p.total = h }

func (p *Probe) intervalUS() int64 { return int64(p.ivl.Get() / time.Microsecond) }

// Answered is how many of the probe's commands (PINGs and AUTH) the server
// has executed: they are in its total_commands_processed, and the watcher
// takes them out of the server's ops/s.
func (p *Probe) Answered() uint64 { return p.answered.Load() }

// pingInterval is the PING interval in force.
func (p *Probe) pingInterval() time.Duration { return p.ivl.Get() }

// SetInterval changes the PING interval of the running probe: the next
// PING is due at most the new interval from now, and every one after it
// the new interval apart.
func (p *Probe) SetInterval(d time.Duration) {
	if !p.ivl.Set(d) {
		return
	}
	if c := p.shared.Load(); c != nil {
		c.retime()
	}
}

// Summary closes the current interval and returns its latency and that of
// the last 10 s. It must be called from one goroutine at a time.
func (p *Probe) Summary() (interval, rolling source.Latency) {
	if c := p.shared.Load(); c != nil {
		// A reply that has arrived counts as answered, not in flight.
		c.sync()
	}
	nowNS := p.now()
	var inflight time.Duration
	if s := p.sentAt.Load(); s != 0 && nowNS > s {
		inflight = time.Duration(nowNS - s)
	}

	p.mu.Lock()
	slot := &p.ring[p.head]
	slot.min, slot.max, slot.end, slot.used = p.curMin, p.curMax, time.Duration(nowNS), true
	p.head = (p.head + 1) % len(p.ring)
	next := &p.ring[p.head]
	next.hist = nil
	next.rtts = next.rtts[:0]
	next.used, next.overflow = false, false
	p.cur, p.curMin, p.curMax = next, 0, 0
	p.last, p.curWorst = p.curWorst, Worst{}
	p.mu.Unlock()
	p.last.Late = time.Duration(p.late.Swap(0))

	slot.ivUS = p.intervalUS()
	h := histPool.Get().(*hdrhistogram.Histogram)
	defer histPool.Put(h)
	h.Reset()
	slot.addTo(h)
	slot.count = h.TotalCount()
	interval = latencyOf(h, slot.min, slot.max)
	interval.InFlight = inflight
	p.total.countInterval(slot, h)
	if p.counter != nil {
		p.counter.Interval(int64(slot.end), slot.rtts, slot.ivUS)
	}

	// Rolling window: the finished intervals that ended within it, the
	// one just closed included. The PING in flight is the interval's
	// alone (Sample.Ping): the window holds the answered ones.
	h.Reset()
	var rmin, rmax time.Duration
	from := time.Duration(nowNS) - probeWindow
	for i := range p.ring {
		s := &p.ring[i]
		if !s.used || s.end < from || s.count == 0 {
			continue
		}
		s.addTo(h)
		if rmin == 0 || (s.min > 0 && s.min < rmin) {
			rmin = s.min
		}
		rmax = max(rmax, s.max)
	}
	rolling = latencyOf(h, rmin, rmax)
	interval.Interval, rolling.Interval = p.pingInterval(), p.pingInterval()
	return interval, rolling
}

// addTo records a finished interval's round trips into h, with the PINGs
// each slow one held up (coordinated-omission correction at its PING
// interval).
func (s *probeSlot) addTo(h *hdrhistogram.Histogram) {
	if s.overflow {
		h.Merge(s.hist)
		return
	}
	for _, us := range s.rtts {
		_ = h.RecordCorrectedValue(us, s.ivUS)
	}
}

// latencyOf summarises a histogram with exact extremes. Percentiles come
// from the histogram (1 % precision) and are kept within [min, max].
func latencyOf(h *hdrhistogram.Histogram, lo, hi time.Duration) source.Latency {
	n := h.TotalCount()
	if n == 0 {
		return source.Latency{}
	}
	clamp := func(us int64) time.Duration {
		d := time.Duration(us) * time.Microsecond
		return min(max(d, lo), hi)
	}
	return source.Latency{
		Count: n,
		Min:   lo,
		P50:   clamp(h.ValueAtQuantile(50)),
		P99:   clamp(h.ValueAtQuantile(99)),
		Max:   hi,
	}
}

// err is why the probe's connection last failed, empty while it works.
func (p *Probe) err() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
