package watch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/sourcetest"
)

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
