package watch

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
)

// Each cause of a PING spike injected on purpose into a real server under
// write load, and found with the right evidence: a fork, DEBUG SLEEP,
// KEYS over a million keys, a mass expiry, SIGSTOP, a delay on the way
// (a proxy); and a run with nothing injected, where no spike is blamed on
// the server. The forkless save's blocked writers are tested on the 9.2
// stand-in (standin_test.go).

// spikeRig is a real server under write load, watched as vkwatch watches
// a local server: /proc read for it, the spike reading on.
type spikeRig struct {
	srv   *server.Server
	admin *redis.Client
	x     *watch
	// spikes are every spike seen so far.
	spikes []*source.Spike
	// stopSeen has a value once the watcher has read the server's main
	// thread stopped (state T) while a PING waited.
	stopSeen chan struct{}
}

// startSpikeRig starts a server (with args), two writers on 10,000 keys
// of its own, and a watcher of addr (the server's, or a proxy's in front
// of it), and waits until the spike rule has a normal to judge by.
func startSpikeRig(t *testing.T, srv *server.Server, addr string) *spikeRig {
	t.Helper()
	r := &spikeRig{srv: srv, admin: servertest.Client(t, srv), stopSeen: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts := &redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true}
	cfg := load.Config{Keys: 10000, Writers: 2}
	if err := load.Preload(ctx, opts, cfg, nil); err != nil {
		t.Fatal(err)
	}
	wr, err := load.StartWriters(ctx, opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wr.Stop)
	proc, err := procmem.New()
	if err != nil {
		t.Fatal(err)
	}
	sched := func(pid int64, at time.Duration, waiting bool) source.ProcSched {
		p := proc.Sched(pid, at, waiting)
		if waiting && p.State == "T" {
			select {
			case r.stopSeen <- struct{}{}:
			default:
			}
		}
		return p
	}
	r.x = startWatch(t, addr, Config{Proc: proc.Read, Sched: sched})
	ruled(t, r.x)
	return r
}

// ruled waits until the spike rule judges x's PINGs: the minute holds
// 500 of them (about a second).
func ruled(t *testing.T, x *watch) {
	t.Helper()
	x.next(t, 30*time.Second, "a spike rule", func(ev source.Event) bool {
		_, _, ok := x.w.SpikeBar()
		return ev.Kind == source.EventSample && ok
	})
}

// spike returns the first spike (from now on) for which match holds,
// failing the test after within with the spikes seen meanwhile.
func (r *spikeRig) spike(t *testing.T, within time.Duration, what string, match func(*source.Spike) bool) *source.Spike {
	t.Helper()
	from := len(r.spikes)
	got := r.spikeWithin(t, within, match)
	if got == nil {
		t.Fatalf("no spike %s within %v; spikes seen:\n%s", what, within, describe(r.spikes[from:]))
	}
	t.Logf("%s: checked: %s", what, strings.Join(got.Checked, "; "))
	return got
}

func describe(sps []*source.Spike) string {
	var b strings.Builder
	for _, sp := range sps {
		fmt.Fprintf(&b, "  %s: %s; checked %s\n", source.Millis(sp.Ping), sp.Summary(), strings.Join(sp.Checked, "; "))
	}
	return b.String()
}

// stallFor is how long a stall the test injects: at least, and three
// times the spike rule's bar where the machine's load lifts it above a
// third of that (at a load of a hundred on two cores, PINGs' p99 reached
// 130 ms here, and a 150 ms stop is no spike by the rule then; the bar
// moves with the load meanwhile, hence the margin).
func stallFor(t *testing.T, x *watch, least time.Duration) time.Duration {
	t.Helper()
	_, bar, ok := x.w.SpikeBar()
	if !ok {
		t.Fatal("no spike rule yet")
	}
	return max(least, 3*bar)
}

// settle lets the spikes of what the test did so far come out: three
// samples, the first two of whose INFO may have waited behind it.
func (r *spikeRig) settle(t *testing.T) { r.samples(t, 3, 60*time.Second) }

// samples waits for n samples, keeping the spikes that come meanwhile.
func (r *spikeRig) samples(t *testing.T, n int, within time.Duration) {
	t.Helper()
	seen := 0
	r.x.next(t, within, fmt.Sprint(n, " samples"), func(ev source.Event) bool {
		switch ev.Kind {
		case source.EventSample:
			seen++
		case source.EventSpike:
			r.spikes = append(r.spikes, ev.Spike)
		}
		return seen == n
	})
}

// named is sp's cause of kind k named what, nil when it has none.
func named(sp *source.Spike, k source.CauseKind, what string) *source.SpikeCause {
	for i := range sp.Causes {
		if sp.Causes[i].Kind == k && sp.Causes[i].What == what {
			return &sp.Causes[i]
		}
	}
	return nil
}

func cause(sp *source.Spike, k source.CauseKind) *source.SpikeCause {
	for i := range sp.Causes {
		if sp.Causes[i].Kind == k {
			return &sp.Causes[i]
		}
	}
	return nil
}

func (r *spikeRig) do(t *testing.T, args ...any) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := r.admin.Do(ctx, args...).Result()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

func (r *spikeRig) info(t *testing.T) source.Info {
	t.Helper()
	return source.ParseInfo(r.do(t, "info", "stats", "persistence", "memory").(string))
}

func TestSpikeDebugSleep(t *testing.T) {
	srv := servertest.StartDefault(t)
	r := startSpikeRig(t, srv, srv.Addr)
	// One connection: CLIENT INFO names the one DEBUG SLEEP is sent on.
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	info, err := c.Do(ctx, "client", "info").Text()
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.Fields(info[strings.Index(info, "addr=")+len("addr="):])[0]
	d := stallFor(t, r.x, 100*time.Millisecond)
	if err := c.Do(ctx, "debug", "sleep", fmt.Sprint(d.Seconds())).Err(); err != nil {
		t.Fatal(err)
	}
	sp := r.spike(t, 10*time.Second, "with DEBUG SLEEP", func(sp *source.Spike) bool { return named(sp, source.CauseCommand, "DEBUG SLEEP") != nil })
	got := named(sp, source.CauseCommand, "DEBUG SLEEP")
	// The sleep lasts d at least, and covers the PING up to that.
	if got.Covers.V < min(d, sp.Ping) || got.Covers.V > sp.Ping || !strings.HasPrefix(got.Evidence, "SLOWLOG #") || !strings.Contains(got.Evidence, "from "+addr) {
		t.Errorf("DEBUG SLEEP %v from %s: %+v", d, addr, got)
	}
	if sp.Ping < d/2 || sp.Threshold < source.SpikeFloor || sp.From >= sp.Sent || sp.To <= sp.Sent+sp.Ping {
		t.Errorf("spike %+v", sp)
	}
}

// TestSpikeKeys: KEYS walks every key of a million, on the main thread.
// (A pattern that matches none walks them all the same, and keeps a
// million names out of the test's memory.)
func TestSpikeKeys(t *testing.T) {
	srv := servertest.StartDefault(t)
	r := startSpikeRig(t, srv, srv.Addr)
	r.do(t, "debug", "populate", "1000000", "many", "8")
	r.settle(t)
	// Under load the rule's bar may pass a KEYS's time: each try that
	// made no spike must have taken less than half again the bar (its
	// time read from SLOWLOG), else the spike was missed.
	for try := 1; ; try++ {
		r.do(t, "keys", "nomatch:*")
		took := r.lastSlow(t, "keys")
		_, bar, _ := r.x.w.SpikeBar()
		sp := r.spikeWithin(t, 10*time.Second, func(sp *source.Spike) bool { return named(sp, source.CauseCommand, "KEYS") != nil })
		if sp == nil {
			if took > bar+bar/2 || try == 4 {
				t.Fatalf("KEYS took %s (SLOWLOG), the bar %s, and no spike named it:\n%s", source.Millis(took), source.Millis(bar), describe(r.spikes))
			}
			t.Logf("KEYS took %s, the bar %s: again", source.Millis(took), source.Millis(bar))
			continue
		}
		c := named(sp, source.CauseCommand, "KEYS")
		if !c.Covers.OK || c.Covers.V < 5*time.Millisecond || !strings.Contains(c.Evidence, "INFO latencystats") {
			t.Errorf("KEYS: %+v", c)
		}
		if strings.Contains(sp.Summary(), "nomatch") {
			t.Errorf("an argument shown: %s", sp.Summary())
		}
		return
	}
}

// lastSlow is how long the newest SLOWLOG entry of command took.
func (r *spikeRig) lastSlow(t *testing.T, command string) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log, err := r.admin.SlowLogGet(ctx, 8).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		if len(e.Args) > 0 && strings.EqualFold(e.Args[0], command) {
			return e.Duration
		}
	}
	t.Fatalf("no %s in SLOWLOG: %+v", command, log)
	return 0
}

// TestSpikeFork: a BGSAVE forks a server large enough that the fork
// stops its main thread past the spike rule's bar; the spike names the
// fork with latest_fork_usec as its pause. The machine decides how large
// that is (here, under load, a few hundred thousand keys pause it tens of
// milliseconds; a fast host needs more): the dataset doubles until a fork
// pauses past the bar.
func TestSpikeFork(t *testing.T) {
	srv := servertest.StartDefault(t)
	r := startSpikeRig(t, srv, srv.Addr)
	keys := 250_000
	for attempt := 0; attempt < 4; attempt, keys = attempt+1, keys*2 {
		r.do(t, "debug", "populate", fmt.Sprint(keys), "big", "300")
		r.settle(t)
		before := r.info(t)
		r.do(t, "bgsave")
		servertest.WaitFor(t, 60*time.Second, "the save to end", func() bool {
			in := r.info(t)
			return in.RDBInProgress.V == 0 && in.TotalForks.V > before.TotalForks.V
		})
		after := r.info(t)
		pause := time.Duration(after.LatestForkUsec.V) * time.Microsecond
		var bar time.Duration
		sp := r.spikeWithin(t, 5*time.Second, func(sp *source.Spike) bool {
			bar = max(bar, sp.Threshold)
			return cause(sp, source.CauseFork) != nil
		})
		if sp == nil {
			if pause > bar+bar/2 && bar > 0 {
				t.Fatalf("the fork paused %s, past the bar %s, and no spike named it:\n%s", source.Millis(pause), source.Millis(bar), describe(r.spikes))
			}
			t.Logf("%d keys: the fork paused %s, no spike past the bar: twice the keys", keys, source.Millis(pause))
			continue
		}
		c := cause(sp, source.CauseFork)
		if c.Covers.V != min(pause, sp.Ping) || c.What != "fork pause" || !strings.HasPrefix(c.Evidence, "latest_fork_usec, total_forks +1") {
			t.Errorf("fork of %d keys, latest_fork_usec %s: %+v", keys, source.Millis(pause), c)
		}
		t.Logf("%d keys, %s used: the fork paused %s", keys, units(after.UsedMemory.V), source.Millis(pause))
		return
	}
	t.Fatalf("no fork of up to %d keys paused the server past the spike rule's bar", keys/2)
}

func units(b int64) string { return fmt.Sprintf("%d MiB", b>>20) }

// spikeWithin is spike that returns nil rather than failing when none
// comes within.
func (r *spikeRig) spikeWithin(t *testing.T, within time.Duration, match func(*source.Spike) bool) *source.Spike {
	t.Helper()
	var got *source.Spike
	servertest.Receive(r.x.events, within, func(ev source.Event) bool {
		if ev.Kind != source.EventSpike {
			return false
		}
		r.spikes = append(r.spikes, ev.Spike)
		if match(ev.Spike) {
			got = ev.Spike
			return true
		}
		return false
	})
	if got != nil {
		t.Logf("PING %s (bar %s): %s", source.Millis(got.Ping), source.Millis(got.Threshold), got.Summary())
	}
	return got
}

// TestSpikeExpiry: 100,000 keys fall due at once: the active expiry's
// slow cycle takes its whole time budget, 430 ms at hz 1 and
// active-expire-effort 10 (43 % of a cron tick), on the main thread, until
// they are gone. One script gives them
// all the same expiry time, five seconds on (its own spike comes and goes
// before; a key already due when the script reaches it would be deleted
// there and then, not expired).
func TestSpikeExpiry(t *testing.T) {
	srv := servertest.Start(t, server.Options{Args: []string{"--hz", "1", "--active-expire-effort", "10"}})
	r := startSpikeRig(t, srv, srv.Addr)
	r.do(t, "debug", "populate", "100000", "exp", "8")
	r.settle(t)
	r.do(t, "eval", expireAll, "0", "100000", "5000")
	sp := r.spike(t, 20*time.Second, "with active expiry", func(sp *source.Spike) bool {
		return cause(sp, source.CauseExpire) != nil
	})
	c := cause(sp, source.CauseExpire)
	if !c.Covers.OK || c.Covers.V < sp.Ping/4 || !strings.Contains(c.Evidence, "expire_cycle_cpu_milliseconds +") ||
		!strings.Contains(c.Evidence, "expired_keys +") {
		t.Errorf("expiry: %+v", c)
	}
}

// TestSpikeStopped: the server stopped (SIGSTOP) for 150 ms (stallFor):
// /proc read while the PING waited shows state T. The stop lasts until
// the watcher has read it too: on a loaded host its probe's loop may not
// run for all of 150 ms, and the spike is then rightly "unexplained
// (... no /proc reading then)" (seen here at a load of 20 on two cores).
func TestSpikeStopped(t *testing.T) {
	srv := servertest.StartDefault(t)
	r := startSpikeRig(t, srv, srv.Addr)
	d := stallFor(t, r.x, 150*time.Millisecond)
	thaw := servertest.Freeze(t, srv)
	time.Sleep(d) // the stop injected, not a wait for something
	if _, ok := servertest.Receive(r.stopSeen, 20*time.Second, func(struct{}) bool { return true }); !ok {
		t.Fatal("the watcher never read the server stopped")
	}
	thaw()
	sp := r.spike(t, 10*time.Second, "with the server stopped", func(sp *source.Spike) bool {
		return cause(sp, source.CauseStopped) != nil
	})
	c := cause(sp, source.CauseStopped)
	if !strings.HasPrefix(c.Evidence, "/proc/PID/task/PID/stat state T") || sp.Ping < d-10*time.Millisecond {
		t.Errorf("stopped: %+v", c)
	}
	for _, o := range sp.Causes {
		if o.Kind == source.CauseCommand {
			t.Errorf("a command blamed for the stop: %+v", o)
		}
	}
}

// delayProxy forwards TCP connections to a server, holding what the
// server sends back for the delay the test sets before passing it on: a
// slow way between vkwatch and the server that the server never sees.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  atomic.Int64 // ns
	// held has a value each time a reply held for a delay has been passed
	// on: the test's event that the delay it set was served.
	held  chan time.Duration
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func startDelayProxy(t *testing.T, target string) *delayProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &delayProxy{ln: ln, target: target, held: make(chan time.Duration, 1)}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *delayProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Go(func() { io.Copy(s, c); s.Close() })
		p.wg.Go(func() { p.back(s, c) })
	}
}

// back passes what the server sends on to the client, each chunk held
// for the delay in force when it arrived, in order.
func (p *delayProxy) back(s, c net.Conn) {
	type chunk struct {
		b   []byte
		due time.Time
		d   time.Duration
	}
	ch := make(chan chunk, 1024)
	p.wg.Go(func() {
		defer c.Close()
		for k := range ch {
			time.Sleep(time.Until(k.due)) // the delay injected
			if _, err := c.Write(k.b); err != nil {
				return
			}
			if k.d > 0 {
				select {
				case p.held <- k.d:
				default:
				}
			}
		}
	})
	defer close(ch)
	for {
		buf := make([]byte, 32<<10)
		n, err := s.Read(buf)
		if n > 0 {
			d := time.Duration(p.delay.Load())
			ch <- chunk{buf[:n], time.Now().Add(d), d}
		}
		if err != nil {
			return
		}
	}
}

// hold holds the replies d on their way back until one so held has been
// passed on, then lets them through again.
func (p *delayProxy) hold(t *testing.T, d time.Duration) {
	t.Helper()
	for len(p.held) > 0 {
		<-p.held
	}
	p.delay.Store(int64(d))
	defer p.delay.Store(0)
	// The probe PINGs every 2 ms: a reply is held within d of the delay
	// set, however loaded the machine, unless the connection is gone.
	_, ok := servertest.Receive(p.held, 30*time.Second, func(got time.Duration) bool { return got == d })
	if !ok {
		t.Fatalf("no reply held %v", d)
	}
}

// TestSpikeDelayOnTheWay: replies held 400 ms (stallFor) on their way
// back: the server saw nothing, and says so by every count it keeps.
func TestSpikeDelayOnTheWay(t *testing.T) {
	srv := servertest.StartDefault(t)
	proxy := startDelayProxy(t, srv.Addr)
	r := startSpikeRig(t, srv, proxy.ln.Addr().String())
	d := stallFor(t, r.x, 400*time.Millisecond)
	proxy.hold(t, d)
	sp := r.spike(t, 10*time.Second, "of the delay", func(sp *source.Spike) bool { return sp.Ping >= d })
	if sp.ServerSide() {
		t.Errorf("the server blamed for a delay on the way: %s", sp.Summary())
	}
	nothing := true
	for _, c := range sp.Causes {
		switch c.Kind {
		case source.CauseNotSeen:
			if !strings.HasPrefix(c.Evidence, "no slow command, no fork, no cycle; the server ") {
				t.Errorf("not seen: %+v", c)
			}
		case source.CauseCPUWait, source.CauseVkwatch:
			// The host's, under the machine's load: never the server's.
			nothing = false
		default:
			t.Errorf("cause %+v", c)
		}
	}
	if nothing && !sp.Has(source.CauseNotSeen) {
		t.Errorf("neither not seen nor the host's: %s", sp.Summary())
	}
}

// TestSpikeNothingInjected: 15 samples of writes with nothing
// injected: whatever spikes the machine's load makes, none is blamed on
// the server.
func TestSpikeNothingInjected(t *testing.T) {
	srv := servertest.StartDefault(t)
	r := startSpikeRig(t, srv, srv.Addr)
	r.samples(t, 15, 30*time.Second)
	for _, sp := range r.spikes {
		if sp.ServerSide() {
			t.Errorf("nothing injected, and the server blamed: PING %s: %s; checked %s", source.Millis(sp.Ping), sp.Summary(), strings.Join(sp.Checked, "; "))
		}
	}
	t.Logf("%d spikes:\n%s", len(r.spikes), describe(r.spikes))
}

// expireAll gives keys exp:0 to exp:(ARGV[1]-1) one expiry time, ARGV[2]
// ms from the server's clock: they fall due together.
const expireAll = `local t = redis.call('TIME')
local at = t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2])
for i = 0, tonumber(ARGV[1]) - 1 do redis.call('PEXPIREAT', 'exp:' .. i, at) end
return at`

// TestSpikeForklessBlockedWriters, on the Valkey 9.2 stand-in: during a
// forkless save, two writers wait for keys the save thread holds; a PING
// spike then is found with them (blocked_clients, the save's type). The
// stand-in cannot stall its PING by itself: a delay on the way stands for
// the stall, and what is tested is that the server's own evidence of the
// blocked writers is read and named.
func TestSpikeForklessBlockedWriters(t *testing.T) {
	s := standin.Start(t, standin.Options{ForklessInfra: true, Method: "forkless"})
	s.Load("key:", 4000, 600)
	proxy := startDelayProxy(t, s.Addr)
	x := startWatch(t, proxy.ln.Addr().String(), Config{})
	ruled(t, x)
	ctx := context.Background()
	if r := x.w.Do(ctx, "BGSAVE"); !r.OK() {
		t.Fatal(r.Err)
	}
	c := s.Client(t)
	writes := make(chan error, 2)
	for _, k := range []string{"key:3000", "key:3999"} {
		go func() { writes <- c.Set(ctx, k, "new", 0).Err() }()
	}
	s.Wait(t, "two blocked writers", func(v standin.View) bool { return v.Blocked == 2 })
	x.next(t, 20*time.Second, "a sample with the writers blocked", sampleWhere(func(s *source.Sample) bool {
		return s.Info.BlockedClients == source.Some[int64](2)
	}))
	d := stallFor(t, x, 400*time.Millisecond)
	proxy.hold(t, d)
	ev, ok := servertest.Receive(x.events, 20*time.Second, func(ev source.Event) bool {
		return ev.Kind == source.EventSpike && ev.Spike.Ping >= d
	})
	if !ok {
		t.Fatal("no spike of the delay")
	}
	sp := ev.Spike
	t.Logf("PING %s: %s; checked %s", source.Millis(sp.Ping), sp.Summary(), strings.Join(sp.Checked, "; "))
	c0 := cause(sp, source.CauseForkless)
	if c0 == nil || c0.Evidence != "blocked_clients 2, rdb_current_bgsave_type forkless; the server keeps no time for it" || c0.Covers.OK {
		t.Errorf("forkless: %+v", sp.Causes)
	}
	s.Step(4000)
	for range 2 {
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
	}
	s.Finish()
	if u := s.Unknown(); len(u) > 0 {
		t.Errorf("the watcher sent commands the stand-in does not know: %q", u)
	}
}
