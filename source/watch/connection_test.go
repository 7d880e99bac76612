package watch

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
