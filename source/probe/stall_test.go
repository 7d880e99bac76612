package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// stallLog keeps OnStall's calls: the PING's send and its age then.
type stallLog struct {
	mu    sync.Mutex
	calls []stallCall
	ch    chan struct{}
}

type stallCall struct{ sent, age int64 }

func newStallLog() *stallLog { return &stallLog{ch: make(chan struct{}, 64)} }

func (l *stallLog) fn(sent int64) {
	l.mu.Lock()
	l.calls = append(l.calls, stallCall{sent, Now() - sent})
	l.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
	default:
	}
}

func (l *stallLog) get() []stallCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]stallCall(nil), l.calls...)
}

// checkStalls freezes srv until p has told OnStall four times about the
// one PING the freeze holds, each at twice the age of the one before,
// then thaws it and checks that the interval's worst PING is that one.
func checkStalls(t *testing.T, srv *server.Server, p *Probe, log *stallLog, stamped bool) {
	t.Helper()
	servertest.WaitFor(t, 10*time.Second, "first PINGs", func() bool { return p.answered.Load() >= 10 })
	if len(log.get()) != 0 {
		// Under load a PING may wait 5 ms on its own: that is what the
		// hook is for, but not what this test looks at.
		log.mu.Lock()
		log.calls = nil
		log.mu.Unlock()
	}
	p.Summary()
	thaw := servertest.Freeze(t, srv)
	var calls []stallCall
	servertest.WaitFor(t, 10*time.Second, "four calls about the frozen PING", func() bool {
		calls = log.get()
		return len(calls) >= 4 && calls[len(calls)-1].sent == calls[len(calls)-4].sent
	})
	thaw()
	calls = calls[len(calls)-4:]
	for i, c := range calls {
		if want := int64(5*time.Millisecond) << i; c.age < want {
			t.Errorf("call %d at %v of the PING, want at least %v", i, time.Duration(c.age), time.Duration(want))
		}
	}
	var w Worst
	servertest.WaitFor(t, 10*time.Second, "the frozen PING answered", func() bool {
		iv, _ := p.Summary()
		if iv.Max >= 40*time.Millisecond {
			w = p.LastWorst()
			return true
		}
		return false
	})
	if w.Sent != calls[0].sent || w.Stamped != stamped || w.Late < 0 {
		t.Errorf("worst %+v, want sent at %d stamped %v", w, calls[0].sent, stamped)
	}
	if got := len(log.get()); got > maxStallCalls+len(calls) {
		t.Errorf("%d calls", got)
	}
}

func TestProbeOnStallShared(t *testing.T) {
	srv := servertest.StartDefault(t)
	p := New(endpointOf(t, srv), nil, 2*time.Millisecond, 3*time.Second, 100*time.Millisecond)
	log := newStallLog()
	p.OnStall(log.fn)
	p.SetStallAfter(5 * time.Millisecond)
	runStarted(t, p)
	checkStalls(t, srv, p, log, true)
}

// TestProbeOnStallSetWhileWaiting: a PING sent before SetStallAfter and
// held by a stopped server is told of all the same (on the shared loop).
func TestProbeOnStallSetWhileWaiting(t *testing.T) {
	srv, p, log := pinging(t)
	thaw := servertest.Freeze(t, srv)
	defer thaw()
	var sent int64
	servertest.WaitFor(t, 10*time.Second, "a PING held 20 ms", func() bool {
		sent = p.sentAt.Load()
		return sent != 0 && Now()-sent >= int64(20*time.Millisecond)
	})
	p.SetStallAfter(5 * time.Millisecond)
	if _, ok := servertest.Receive(log.ch, 10*time.Second, func(struct{}) bool { return true }); !ok {
		t.Fatal("no call about the PING held")
	}
	if c := log.get(); c[0].sent != sent {
		t.Errorf("a call about the PING sent at %d, want %d", c[0].sent, sent)
	}
}

// TestProbeOnStallGoroutine: a TLS probe runs on a goroutine of its own
// (no kernel timestamps): it calls OnStall the same way.
func TestProbeOnStallGoroutine(t *testing.T) {
	certs := servertest.NewCerts(t)
	srv := servertest.Start(t, server.Options{TLS: certs.Server(false)})
	pem, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	ep := endpointOf(t, srv)
	p := New(ep, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}, 2*time.Millisecond, 3*time.Second, 100*time.Millisecond)
	log := newStallLog()
	p.OnStall(log.fn)
	p.SetStallAfter(5 * time.Millisecond)
	runStarted(t, p)
	checkStalls(t, srv, p, log, false)
	if p.shared.Load() != nil {
		t.Error("a TLS probe on the shared loop")
	}
}

// pinging is a probe of a server of its own with OnStall logged, no stall
// time set, once it has had answers.
func pinging(t *testing.T) (*server.Server, *Probe, *stallLog) {
	srv := servertest.StartDefault(t)
	p := New(endpointOf(t, srv), nil, 2*time.Millisecond, 3*time.Second, 100*time.Millisecond)
	log := newStallLog()
	p.OnStall(log.fn)
	runStarted(t, p)
	servertest.WaitFor(t, 10*time.Second, "first PINGs", func() bool { return p.answered.Load() >= 10 })
	return srv, p, log
}

func TestProbeStallOff(t *testing.T) {
	srv, p, log := pinging(t)
	thaw := servertest.Freeze(t, srv)
	servertest.WaitFor(t, 10*time.Second, "a PING in flight 50 ms", func() bool {
		iv, _ := p.Summary()
		return iv.InFlight >= 50*time.Millisecond
	})
	thaw()
	if c := log.get(); len(c) != 0 {
		t.Errorf("told with no stall time set: %+v", c)
	}
}

func runStarted(t *testing.T, p *Probe) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// counted is an IntervalCounter that keeps what it is given.
type counted struct {
	n   int64
	ivs []int64
	end int64
}

func (c *counted) Interval(end int64, rtts []int64, ivUS int64) {
	c.n += int64(len(rtts))
	c.ivs = append(c.ivs, ivUS)
	c.end = end
}

// TestProbeCountsIntervals: every round trip answered reaches the
// counter exactly once, with the PING interval.
func TestProbeCountsIntervals(t *testing.T) {
	srv := servertest.StartDefault(t)
	p, stop := startProbe(t, srv)
	var c counted
	p.CountIntervals(&c)
	servertest.WaitFor(t, 10*time.Second, "100 PINGs", func() bool {
		p.Summary()
		return c.n >= 100
	})
	stop()
	p.Summary()
	if c.n != int64(p.answered.Load()) || c.end <= 0 || c.ivs[0] != 2000 {
		t.Errorf("counted %d of %d answered, end %d, intervals %v", c.n, p.answered.Load(), c.end, c.ivs[:1])
	}
}
