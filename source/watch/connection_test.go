package watch

import (
	"context"
	"crypto/x509"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

func TestWatcherReconnectsAfterRestart(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	x.next(t, 10*time.Second, "a sample with ops", sampleWhere(func(s *source.Sample) bool { return s.OpsPerSec.OK }))
	oldPID := srv.PID()

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	down := x.next(t, 10*time.Second, "disconnected", kind(source.EventDisconnected))
	if down.Err == "" || strings.Contains(down.Err, "\n") {
		t.Errorf("disconnect reason %q", down.Err)
	}
	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	up := x.next(t, 10*time.Second, "connected again", kind(source.EventConnected))
	if took := time.Since(restarted); took > 2*time.Second {
		t.Errorf("reconnected %s after the restart, want within 2 s", took)
	}
	if up.Identity.ProcessID != source.Some(int64(srv.PID())) || srv.PID() == oldPID {
		t.Errorf("identity after restart %+v (old pid %d, new %d)", up.Identity, oldPID, srv.PID())
	}
	n := x.count(source.EventDisconnected)
	if n != 1 {
		t.Errorf("%d disconnect events for one outage, want 1", n)
	}
	first := x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	if first.Sample.OpsPerSec.OK {
		t.Errorf("ops/s %v on the first sample after reconnecting", first.Sample.OpsPerSec.V)
	}
	x.next(t, 10*time.Second, "a sample with ops", sampleWhere(func(s *source.Sample) bool { return s.OpsPerSec.OK }))
}

func TestWatcherDebugSleepShowsInPing(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{})
	x.next(t, 10*time.Second, "a sample with PINGs", sampleWhere(func(s *source.Sample) bool { return s.Ping.Count > 0 }))
	// A PING sent just after the sleep began waits one probe interval
	// less than the sleep: sleep a little over 1 s.
	if r := x.w.Do(context.Background(), "DEBUG", "SLEEP", "1.05"); r.Err != "" {
		t.Fatal(r.Err)
	}
	x.next(t, 10*time.Second, "a sample whose worst PING is >= 1s", func(ev source.Event) bool {
		if ev.Kind == source.EventDisconnected {
			t.Errorf("a 1 s stall reported as %q", ev.Err)
		}
		return ev.Kind == source.EventSample && ev.Sample.Ping.Worst() >= time.Second && ev.Sample.Ping10s.Worst() >= time.Second
	})
}

func TestWatcherFrozenServer(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	x := startWatch(t, srv.Addr, Config{})
	last := x.next(t, 10*time.Second, "a sample", kind(source.EventSample)).Sample
	thaw := servertest.Freeze(t, srv)
	ev := x.next(t, 10*time.Second, "not answering", func(ev source.Event) bool {
		if ev.Kind == source.EventSample {
			last = ev.Sample
		}
		return ev.Kind == source.EventDisconnected
	})
	if !ev.Stalled || !strings.HasPrefix(ev.Err, "not answering for ") {
		t.Errorf("stall reported as %q (stalled %v)", ev.Err, ev.Stalled)
	}
	thaw()
	x.next(t, 10*time.Second, "connected again", kind(source.EventConnected))
	s := x.next(t, 10*time.Second, "a sample", kind(source.EventSample)).Sample
	if s.Seq != last.Seq+1 {
		t.Errorf("first sample after the stall has seq %d, last before %d", s.Seq, last.Seq)
	}
	if s.Ping.Worst() < time.Second && s.Ping10s.Worst() < time.Second {
		t.Errorf("the stall does not show in the PING summary: %+v / %+v", s.Ping, s.Ping10s)
	}
}

func TestConnectErrors(t *testing.T) {
	port, err := server.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	connect := func(addr string, cfg Config) (source.Identity, error) {
		ep := sourcetest.Endpoint(t, addr)
		w := New(testNode, ep, nil, cfg)
		defer w.Close()
		return w.Connect(ctx)
	}
	var causes []string
	asConnectError := func(err error) *ConnectError {
		t.Helper()
		var ce *ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("error %v (%T) is not a *ConnectError", err, err)
		}
		causes = append(causes, ce.Error())
		if strings.Contains(ce.Error(), "\n") {
			t.Errorf("error is not one line: %q", ce.Error())
		}
		return ce
	}

	refused := "127.0.0.1:" + strconv.Itoa(port)
	defer func() { t.Log("causes seen:", causes) }()
	_, err = connect(refused, Config{})
	if ce := asConnectError(err); ce.Error() != refused+": connection refused" || ce.Unwrap() == nil {
		t.Errorf("refused: %q", ce.Error())
	}

	_, err = connect(filepath.Join(t.TempDir(), "none.sock"), Config{})
	if ce := asConnectError(err); !strings.HasSuffix(ce.Error(), "none.sock: no such socket") {
		t.Errorf("missing socket: %q", ce.Error())
	}

	srv := servertest.Start(t, server.Options{Password: "s3cr3t-pass"})
	_, err = connect(srv.Addr, Config{})
	if ce := asConnectError(err); ce.Error() != srv.Addr+": NOAUTH password required" {
		t.Errorf("no password: %q", ce.Error())
	}
	_, err = connect("redis://:not-the-pass@"+srv.Addr, Config{})
	if ce := asConnectError(err); !strings.HasPrefix(ce.Error(), srv.Addr+": authentication failed: WRONGPASS") ||
		strings.Contains(ce.Error(), "not-the-pass") {
		t.Errorf("wrong password: %q", ce.Error())
	}
	id, err := connect("redis://:s3cr3t-pass@"+srv.Addr, Config{})
	if err != nil || id.ProcessID != source.Some(int64(srv.PID())) || strings.Contains(id.Addr, "s3cr3t") {
		t.Errorf("right password: %+v, %v", id, err)
	}

	// TLS to a plain port: the handshake fails or hangs.
	plain := servertest.Start(t, server.Options{})
	_, err = connect("rediss://"+plain.Addr, Config{ConnectTimeout: 2 * time.Second})
	if ce := asConnectError(err); !strings.Contains(ce.Cause, "TLS") {
		t.Errorf("TLS to a plain port: %q", ce.Error())
	}

	// Unreadable TLS files are a connect error too.
	ep, _ := source.ParseAddress("rediss://" + plain.Addr)
	ep.TLS.CACert = filepath.Join(t.TempDir(), "missing.pem")
	w := New(testNode, ep, nil, Config{})
	_, err = w.Connect(ctx)
	if ce := asConnectError(err); !strings.Contains(ce.Cause, "--cacert") {
		t.Errorf("missing CA file: %q", ce.Error())
	}
	w.Close()
}

func TestWatcherRunReportsRefusedOnce(t *testing.T) {
	port, err := server.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	x := startWatch(t, "127.0.0.1:"+strconv.Itoa(port), Config{})
	ev := x.next(t, 10*time.Second, "disconnected", kind(source.EventDisconnected))
	if ev.Err != "connection refused" {
		t.Errorf("reason %q", ev.Err)
	}
	// Retries go on (every <= 500 ms): a server that appears on the port is
	// picked up.
	srv := servertest.Start(t, server.Options{Port: port})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	_ = srv
	n := x.count(source.EventDisconnected)
	if n != 1 {
		t.Errorf("%d disconnect events while retrying, want 1", n)
	}
}

func TestWatcherConfigNOPERM(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	c := servertest.Client(t, srv)
	if err := c.Do(context.Background(), "ACL", "SETUSER", "watcher", "on", ">w-pass", "~*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	x := startWatch(t, "redis://watcher:w-pass@"+srv.Addr, Config{})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	for range 3 {
		s := x.next(t, 10*time.Second, "a sample", kind(source.EventSample)).Sample
		if !strings.Contains(s.Config.Err, "NOPERM") || s.Config.Method != "" || !s.Info.UsedMemory.OK {
			t.Errorf("config %+v used %+v", s.Config, s.Info.UsedMemory)
		}
	}
	r := x.w.Do(context.Background(), "CONFIG", "GET", "maxmemory")
	if !strings.HasPrefix(r.Err, "NOPERM") {
		t.Errorf("Do of a forbidden command: %+v", r)
	}
}

// A cluster node says so on connecting (INFO cluster, asked once), a plain
// server does not.
func TestIdentityCluster(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}, true},
	} {
		s := servertest.Start(t, server.Options{Args: c.args})
		ep := sourcetest.Endpoint(t, s.Addr)
		w := New(ep.Node(), ep, nil, Config{})
		id, err := w.Connect(context.Background())
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if id.Cluster != c.want {
			t.Errorf("%v: Identity.Cluster = %v, want %v", c.args, id.Cluster, c.want)
		}
	}
}

// watchEndpoint runs a watcher of ep, built by the test (TLS files, users)
// or parsed by startWatch, collecting its events until the test ends.
// testNode is the node id the watchers of these tests give their events:
// not the address, so a test sees the id it chose, not one derived.
const testNode source.NodeID = "node-under-test"

func watchEndpoint(t *testing.T, ep source.Endpoint, cfg Config) *watch {
	t.Helper()
	x := &watch{clock: source.NewClock(), events: make(chan source.Event, 100000), done: make(chan struct{})}
	x.w = New(testNode, ep, x.clock, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	x.cancel = cancel
	go func() {
		defer close(x.done)
		x.w.Run(ctx, func(ev source.Event) {
			select {
			case x.events <- ev:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(x.stop)
	return x
}

// connectFails makes one Connect to ep and checks that it fails, within
// the connect timeout and a margin, with a one-line *ConnectError that
// names the endpoint and whose cause contains every part of want.
func connectFails(t *testing.T, name string, ep source.Endpoint, want ...string) {
	t.Helper()
	const timeout = 3 * time.Second
	w := New(testNode, ep, nil, Config{ConnectTimeout: timeout})
	defer w.Close()
	start := time.Now()
	_, err := w.Connect(context.Background())
	took := time.Since(start)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Errorf("%s: error %v (%T), want a *ConnectError", name, err, err)
		return
	}
	t.Logf("%s: %s (%s)", name, ce, took.Round(time.Millisecond))
	if took > timeout+5*time.Second {
		t.Errorf("%s: took %s, connect timeout %s", name, took, timeout)
	}
	if ce.Addr != ep.String() || !strings.HasPrefix(ce.Error(), ep.String()+": ") || strings.ContainsAny(ce.Error(), "\r\n") {
		t.Errorf("%s: %q is not one line naming %s", name, ce.Error(), ep)
	}
	for _, s := range want {
		if !strings.Contains(ce.Cause, s) {
			t.Errorf("%s: cause %q, want it to contain %q", name, ce.Cause, s)
		}
	}
}

// TestWatcherTLS watches a real TLS server that requires client
// certificates, and checks how each way of getting TLS wrong reads.
func TestWatcherTLS(t *testing.T) {
	certs := servertest.NewCerts(t)
	srv := servertest.Start(t, server.Options{TLS: certs.Server(true)})
	_, port, _ := strings.Cut(srv.Addr, ":")

	good, err := source.ParseAddress("rediss://" + srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	good.TLS.CACert, good.TLS.Cert, good.TLS.Key = certs.CA, certs.ClientCert, certs.ClientKey

	noCA := good
	noCA.TLS.CACert = "" // the system's roots do not know the test CA
	// The system's roots are read once a process, at the first handshake
	// that needs them: read here, not inside the 3 s connect timeout, where
	// on a loaded machine under -race they made the handshake time out.
	if _, err := x509.SystemCertPool(); err != nil {
		t.Fatal(err)
	}
	connectFails(t, "system roots", noCA, "TLS handshake failed", "unknown authority")
	otherCA := good
	otherCA.TLS.CACert = certs.OtherCA
	connectFails(t, "untrusted CA", otherCA, "TLS handshake failed", "unknown authority")
	wrongName := good
	wrongName.TLS.SNI = "wrong.example"
	connectFails(t, "wrong server name", wrongName, "TLS handshake failed", "wrong.example")
	noCert := good
	noCert.TLS.Cert, noCert.TLS.Key = "", ""
	// The server's alert or, when our first command crosses it, a reset.
	connectFails(t, "no client certificate", noCert, "certificate required")
	plain := good
	plain.TLS = source.TLSOptions{}
	connectFails(t, "plain to a TLS port", plain, "plain connection to a TLS port?")

	// --insecure skips verification (not the client certificate the
	// server asks for).
	insecure := otherCA
	insecure.TLS.Insecure = true
	w := New(testNode, insecure, nil, Config{})
	if id, err := w.Connect(context.Background()); err != nil || id.ProcessID != source.Some(int64(srv.PID())) {
		t.Errorf("--insecure with an untrusted CA: %+v, %v", id, err)
	}
	w.Close()

	// The name in the certificate: by host name as well as by IP.
	byName, err := source.ParseAddress("rediss://localhost:" + port)
	if err != nil {
		t.Fatal(err)
	}
	byName.TLS = good.TLS
	w = New(testNode, byName, nil, Config{})
	if _, err := w.Connect(context.Background()); err != nil {
		t.Errorf("rediss://localhost: %v", err)
	}
	w.Close()

	// A full watch over TLS with a client certificate: samples, PINGs on
	// the probe's own TLS connection, a command, and nothing left behind.
	leaks := goleak.IgnoreCurrent()
	x := watchEndpoint(t, good, Config{})
	id := x.next(t, 10*time.Second, "connected", kind(source.EventConnected)).Identity
	if id.Addr != "rediss://"+srv.Addr || id.ProcessID != source.Some(int64(srv.PID())) {
		t.Errorf("identity %+v", id)
	}
	x.next(t, 10*time.Second, "a sample with ops/s and PINGs over TLS", sampleWhere(func(s *source.Sample) bool {
		return s.OpsPerSec.OK && s.Ping.Count > 0 && s.Info.UsedMemory.OK
	}))
	if r := x.w.Do(context.Background(), "PING"); r.Err != "" || r.Reply != "PONG" {
		t.Errorf("Do over TLS: %+v", r)
	}
	x.stop()
	goleak.VerifyNone(t, leaks)
}

// TestWatcherTLSExpired checks that an expired server certificate is
// refused, and accepted with --insecure.
func TestWatcherTLSExpired(t *testing.T) {
	certs := servertest.NewCerts(t)
	srv := servertest.Start(t, server.Options{TLS: certs.Expired()})
	ep := sourcetest.Endpoint(t, "rediss://"+srv.Addr)
	ep.TLS.CACert = certs.CA
	connectFails(t, "expired certificate", ep, "TLS handshake failed", "expired")

	ep.TLS.Insecure = true
	x := watchEndpoint(t, ep, Config{})
	x.next(t, 10*time.Second, "connected with --insecure", kind(source.EventConnected))
	x.next(t, 10*time.Second, "a sample with PINGs", sampleWhere(func(s *source.Sample) bool { return s.Ping.Count > 0 }))
}

func TestRedisOptions(t *testing.T) {
	ep, err := source.ParseAddress("valkey://alice:pw@h:7004/3")
	if err != nil {
		t.Fatal(err)
	}
	o, err := RedisOptions(ep)
	if err != nil {
		t.Fatal(err)
	}
	if o.Network != "tcp" || o.Addr != "h:7004" || o.Username != "alice" || o.Password != "pw" || o.DB != 3 || o.Protocol != 2 {
		t.Errorf("options = %s %s %s db %d protocol %d", o.Network, o.Addr, o.Username, o.DB, o.Protocol)
	}
	if o.TLSConfig != nil {
		t.Error("TLS configured for a plain endpoint")
	}
	ep, _ = source.ParseAddress("rediss://db.example:7005")
	if o, err = RedisOptions(ep); err != nil || o.TLSConfig == nil || o.TLSConfig.ServerName != "db.example" {
		t.Errorf("rediss://: %v, TLS %+v", err, o)
	}
}

// TestConnStateMoves walks the connection through the outages a user
// meets and checks what each move says: an outage once however many
// reconnects fail, a stall every time INFO times out (each says how long),
// its end once, and a dead connection after a stall.
func TestConnStateMoves(t *testing.T) {
	steps := []struct {
		e    connEvent
		want connState
		news bool
	}{
		{dialFailed, down, true},  // the first attempt fails: said
		{dialFailed, down, false}, // the same outage: not said again
		{dialled, up, true},
		{answered, up, false},
		{timedOut, stalled, true},
		{timedOut, stalled, true}, // still silent: said again, with the time
		{answered, up, true},      // the stall is over
		{timedOut, stalled, true},
		{failed, down, true}, // the stalled connection dies
		{dialFailed, down, false},
		{dialled, up, true},
		{failed, down, true},
		{dialFailed, down, false},
	}
	s := &sampling{}
	if s.state != connecting || s.state.connected() {
		t.Fatalf("a new sampling is in state %d, connected %v: want connecting, not connected", s.state, s.state.connected())
	}
	for i, st := range steps {
		from := s.state
		news := s.move(st.e)
		if s.state != st.want || news != st.news {
			t.Fatalf("step %d: %d --%d--> %d, news %v; want %d, news %v", i, from, st.e, s.state, news, st.want, st.news)
		}
		if got, want := s.state.connected(), st.want == up || st.want == stalled; got != want {
			t.Fatalf("step %d: connected() = %v in state %d", i, got, s.state)
		}
	}
	if st, news := connecting.next(dialled); st != up || !news {
		t.Fatalf("connecting --dialled--> %d, news %v; want up, news", st, news)
	}
}

// TestWatcherLimitedACLUser watches with an ACL user allowed only INFO,
// PING and CONFIG GET: that is all vkwatch needs to watch. A BGSAVE it may
// not send comes back with the server's NOPERM text verbatim, and the
// watch goes on.
func TestWatcherLimitedACLUser(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	admin := servertest.Client(t, srv)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "watcher", "reset", "on", ">w-pass-1234",
		"-@all", "+info", "+ping", "+config|get").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "blind", "reset", "on", ">b-pass-1234", "-@all", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	savesBefore := source.ParseInfo(admin.Info(ctx, "persistence").Val()).RDBSaves

	// What the server itself answers this user for BGSAVE.
	direct := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "watcher", Password: "w-pass-1234",
		Protocol: 2, DisableIdentity: true})
	defer direct.Close()
	want := direct.Do(ctx, "BGSAVE").Err()
	if want == nil || !strings.HasPrefix(want.Error(), "NOPERM") {
		t.Fatalf("the server let the limited user BGSAVE: %v", want)
	}

	x := startWatch(t, "redis://watcher:w-pass-1234@"+srv.Addr, Config{})
	x.next(t, 10*time.Second, "connected", kind(source.EventConnected))
	s := x.next(t, 10*time.Second, "a sample with ops/s and PINGs", sampleWhere(func(s *source.Sample) bool {
		return s.OpsPerSec.OK && s.Ping.Count > 0
	})).Sample
	if s.Config.Err != "" || !s.Config.RDBKeySaveDelay.OK || !s.Info.UsedMemory.OK {
		t.Errorf("CONFIG GET or INFO failed for the limited user: config %+v", s.Config)
	}

	r := x.w.Do(ctx, "BGSAVE")
	if r.Err != want.Error() || r.Reply != "" {
		t.Errorf("BGSAVE as the limited user: %+v, want the server's %q verbatim", r, want.Error())
	}
	// The answer is also an event, and sampling goes on after it with no
	// disconnect.
	x.next(t, 10*time.Second, "the command's answer", func(ev source.Event) bool {
		return ev.Kind == source.EventCommand && ev.Command.Err == want.Error()
	})
	for range 3 {
		x.next(t, 10*time.Second, "a sample after the refusal", func(ev source.Event) bool {
			if ev.Kind == source.EventDisconnected {
				t.Errorf("disconnected after a NOPERM: %q", ev.Err)
			}
			return ev.Kind == source.EventSample
		})
	}
	if after := source.ParseInfo(admin.Info(ctx, "persistence").Val()).RDBSaves; after != savesBefore {
		t.Errorf("rdb_saves went from %v to %v: a save ran", savesBefore, after)
	}

	// A user who may not even read INFO cannot be watched: one line says so.
	ep, _ := source.ParseAddress("redis://blind:b-pass-1234@" + srv.Addr)
	connectFails(t, "user without INFO", ep, "INFO not permitted", "NOPERM")
	ep, _ = source.ParseAddress("redis://watcher:not-the-pass@" + srv.Addr)
	connectFails(t, "wrong password for the user", ep, "authentication failed", "WRONGPASS")
}

// TestDoFrozenServerTimesOut: a command sent to a stopped server comes
// back as a timeout after CommandTimeout, also as an event; sampling and
// the next command carry on once the server wakes up. A BGSAVE that timed
// out has reached the server: it runs when the server wakes, and the
// watcher sees that save like any other.
func TestDoFrozenServerTimesOut(t *testing.T) {
	srv := servertest.Start(t, server.Options{})
	admin := servertest.Client(t, srv)
	x := startWatch(t, srv.Addr, Config{CommandTimeout: time.Second})
	x.next(t, 10*time.Second, "a sample", kind(source.EventSample))
	savesBefore := source.ParseInfo(admin.Info(context.Background(), "persistence").Val()).RDBSaves
	// Do's own connection is open: the BGSAVE below reaches the frozen
	// server's socket (on a new connection the handshake would time out
	// first, and BGSAVE would never leave).
	if r := x.w.Do(context.Background(), "PING"); r.Reply != "PONG" {
		t.Fatalf("PING: %+v", r)
	}

	thaw := servertest.Freeze(t, srv)
	start := time.Now()
	r := x.w.Do(context.Background(), "BGSAVE")
	took := time.Since(start)
	if r.OK() || r.Err != "timed out after 1s; the server may still run it when it answers" || r.Reply != "" {
		t.Errorf("BGSAVE to a frozen server: %+v", r)
	}
	if took < time.Second || took > 6*time.Second {
		t.Errorf("Do returned after %s with a 1 s command timeout", took)
	}
	x.next(t, 10*time.Second, "the timeout as an event", func(ev source.Event) bool {
		return ev.Kind == source.EventCommand && ev.Command.Err == r.Err && ev.Command.Command == "BGSAVE"
	})

	thaw()
	x.next(t, 10*time.Second, "a sample after the stall", kind(source.EventSample))
	if r := x.w.Do(context.Background(), "PING"); r.Err != "" || r.Reply != "PONG" {
		t.Errorf("the next command after a timeout: %+v", r)
	}
	rep := x.next(t, 15*time.Second, "the timed-out BGSAVE's report", kind(source.EventSaveEnded)).Report
	if rep.Kind != source.SaveFork || rep.Status != "ok" {
		t.Errorf("report %+v", rep)
	}
	after := source.ParseInfo(admin.Info(context.Background(), "persistence").Val()).RDBSaves
	if !after.OK || after.V != savesBefore.V+1 {
		t.Errorf("rdb_saves %v -> %v, want one save", savesBefore, after)
	}
	if strings.Contains(r.Err, "\n") {
		t.Errorf("error not one line: %q", r.Err)
	}
}
