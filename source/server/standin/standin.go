// Package standin is a stand-in for a Valkey 9.2 server with forkless
// save, for tests only: no 9.2 server can be built here. It is a real TCP
// server on a free loopback port that speaks RESP2 and the persistence
// protocol as shared/VALKEY.md ("Forkless save") describes the real
// source: bgsave-default-method and forkless-infrastructure-enabled with
// their CONFIG GET/SET rules and error replies, BGSAVE (only SCHEDULE and
// CANCEL as arguments), rdb_saves counted as a forkless save starts,
// rdb_current_bgsave_type, keys processed stored at most once a second,
// forkless_estimated_seconds_remaining (-1 before the first key and in the
// tail), the tail in which the file is written, the asynchronous cancel,
// FLUSHALL and FLUSHDB aborting a save without failing it, writers blocked
// on keys the save thread holds (blocked_clients), a forkless full sync
// and an AOF rewrite scheduled behind the save; and a fork save, whose
// rdb_last_cow_size a forkless save leaves as it was. It answers what
// vkwatch and go-redis send (HELLO is refused, so go-redis falls back to
// RESP2; CLIENT SETINFO/SETNAME, SELECT, PING, INFO with sections, CONFIG
// GET/SET, SET/GET, EXISTS, DBSIZE, FLUSHALL/FLUSHDB, BGSAVE,
// BGREWRITEAOF) and refuses anything else as unknown, keeping it in
// Unknown so a test can say what the stand-in lacks.
//
// The stand-in's time does not pass by itself: the test moves it
// (Advance) and moves the save thread over keys (Step) between the
// samples it waits for (Wait), so what a test checks never rests on a
// sleep. Everything a real server here (Redis 7.0.15) can show is tested
// on a real server, not on the stand-in.
//
// Its process_id is one no Linux process can have (above PID_MAX_LIMIT),
// so vkwatch, which reads /proc for a server on this host, finds nothing
// there and reads INFO's figures, as for a server on another host.
package standin

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// ImpossiblePID is the stand-in's process_id: above Linux's
// PID_MAX_LIMIT (4194304), so no /proc entry can be it.
const ImpossiblePID = 4194305

// Options configure a stand-in as a real server's command line would.
type Options struct {
	// ForklessInfra is forkless-infrastructure-enabled: startup only.
	ForklessInfra bool
	// Method is bgsave-default-method at startup ("fork" when empty).
	Method string
	// ModuleForcesFork stands for a loaded module that cannot save
	// forklessly: the server falls back to fork whatever the method.
	ModuleForcesFork bool
}

// Server is a running stand-in.
type Server struct {
	Addr string
	Port int

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
	st    state
	// changed is closed and replaced whenever the state changes: Wait's
	// wake-up.
	changed chan struct{}
	closed  bool
	// paused: the listener is closed until Resume (Pause).
	paused bool
}

// Start starts a stand-in on a free loopback port, closed when the test
// ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("stand-in: listen: %v", err)
	}
	s := &Server{ln: ln, Addr: ln.Addr().String(), Port: ln.Addr().(*net.TCPAddr).Port,
		conns: map[net.Conn]bool{}, changed: make(chan struct{})}
	s.st.init(opts, s.Port)
	s.wg.Go(s.accept)
	t.Cleanup(s.Close)
	return s
}

// Close stops the stand-in: its listener and every connection.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.st.releaseAll()
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.st.clients++
		s.st.accepted++
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

// do runs one command: under the lock, as the server's one thread does,
// except while a write waits for a key the save thread holds.
func (s *Server) do(cl *client, args []string) reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		rep, wait := s.st.command(cl, args)
		s.bump()
		if wait == nil {
			return rep
		}
		// Blocked: the client waits (the lock released) until the save
		// thread has written the key, then runs the command again.
		s.st.blocked++
		s.bump()
		s.mu.Unlock()
		<-wait
		s.mu.Lock()
		s.st.blocked--
	}
}

// bump wakes Wait; s.mu is held.
func (s *Server) bump() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// within is how long Wait waits for a condition before failing the test:
// a bound for a stuck test, never a measure of anything.
const within = 60 * time.Second

// Wait waits until cond holds of the stand-in's state, checked at every
// change of it (a command run, a save's step), and fails the test after
// a minute saying what it waited for.
func (s *Server) Wait(t testing.TB, what string, cond func(View) bool) View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	v, err := s.Await(ctx, cond)
	if err != nil {
		t.Fatalf("stand-in: no %s within %s (state %+v)", what, within, v)
	}
	return v
}

// Await is Wait for a goroutine of the test's (one that drives the
// stand-in while the code under test runs): it returns ctx's error when
// ctx ends first.
func (s *Server) Await(ctx context.Context, cond func(View) bool) (View, error) {
	for {
		s.mu.Lock()
		v := s.st.view()
		ch := s.changed
		s.mu.Unlock()
		if cond(v) {
			return v, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v, ctx.Err()
		}
	}
}

// WaitSampled waits until n more INFO replies with the persistence
// section (a watcher's samples) have been served from now on: what the
// watcher has seen of the state as it is.
func (s *Server) WaitSampled(t testing.TB, n int) View {
	t.Helper()
	from := s.View().Samples
	return s.Wait(t, fmt.Sprintf("%d more samples", n), func(v View) bool { return v.Samples >= from+n })
}

// View is the stand-in's state for a test.
func (s *Server) View() View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.view()
}

// Unknown lists the commands the stand-in refused as unknown, in order.
func (s *Server) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.st.unknown...)
}

// locked runs f on the state under the lock and wakes Wait.
func (s *Server) locked(f func(st *state)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.st)
	s.bump()
}

// Drop closes every client connection at once, as a network cut or a
// proxy dropping them would; the stand-in goes on, its state kept, and
// accepts new connections.
func (s *Server) Drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
}

// Pause makes the stand-in unreachable, its state kept: every connection
// is closed and a new one refused until Resume.
func (s *Server) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.paused {
		return
	}
	s.paused = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
}

// Resume listens again on the stand-in's port after Pause.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.paused {
		return
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		t.Fatalf("stand-in: listen again on %s: %v", s.Addr, err)
	}
	s.ln, s.paused = ln, false
	s.wg.Go(s.accept)
}

// Setting is the stand-in's setting name as CONFIG GET reads it.
func (s *Server) Setting(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.cfg[name]
}

// SaveMethods are the methods of the BGSAVEs the stand-in started, in
// order ("fork", "forkless").
func (s *Server) SaveMethods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.st.saveMethods...)
}

// DriveSaves moves each save the stand-in runs (a bench's BGSAVEs) on,
// for a test running something that saves and waits for the saves to
// end: a quarter of its keys for every two samples the watcher takes,
// then its file written. It returns nil when ctx ends between saves, and
// ctx's error when it ends during one.
func (s *Server) DriveSaves(ctx context.Context) error {
	for {
		v, err := s.Await(ctx, func(v View) bool { return v.Saving })
		if err != nil {
			return nil
		}
		for s.View().Written < v.Keys {
			from := s.View().Samples
			if _, err := s.Await(ctx, func(w View) bool { return w.Samples >= from+2 }); err != nil {
				return err
			}
			s.Step(v.Keys / 4)
			s.Advance(time.Second)
		}
		from := s.View().Samples
		if _, err := s.Await(ctx, func(w View) bool { return w.Samples >= from+2 }); err != nil {
			return err
		}
		s.Advance(time.Second)
		s.Finish()
	}
}
