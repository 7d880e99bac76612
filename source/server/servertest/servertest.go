// Package servertest starts real servers for tests. A test that needs a
// server fails loudly when none can be started: it is never skipped.
package servertest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
)

// Start starts a server with the given options and stops it when the test
// ends. The debug command is enabled (DEBUG SLEEP, DEBUG POPULATE) unless
// opts.Args already says otherwise.
func Start(t testing.TB, opts server.Options) *server.Server {
	t.Helper()
	opts.Args = append([]string{"--enable-debug-command", "yes"}, opts.Args...)
	s, err := server.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("cannot start a server for this test (install redis-server or valkey-server): %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop server: %v", err)
		}
	})
	return s
}

// StartDefault starts a server with the default options (those of
// server.Options{}: a free loopback port, no password, no TLS), stopped
// when the test ends: the server most tests need.
func StartDefault(t testing.TB) *server.Server {
	t.Helper()
	return Start(t, server.Options{})
}

// StartWithClient starts a server with the default options, as
// StartDefault, and gives it with a client of the test's own (Client).
func StartWithClient(t testing.TB) (*server.Server, *redis.Client) {
	t.Helper()
	s := StartDefault(t)
	return s, Client(t, s)
}

// FreePort is a loopback TCP port nothing listens on now (server.FreePort),
// failing the test when none can be had.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := server.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startAtOnce is how many servers StartMany starts at the same time: a
// server's start is mostly waiting (exec, the dynamic loader, the first
// log line), so sixteen at a time keep two cores busy without the
// hundreds of processes at once that overran the start timeout.
const startAtOnce = 16

// StartMany starts n servers with the same options (a fleet for a test),
// startAtOnce at a time, stopped together when the test ends; it fails
// the test when any cannot be started, or when this process may not open
// the files a fleet of n takes (a pipe of each server's log and a few
// connections to each).
func StartMany(t testing.TB, n int, opts server.Options) []*server.Server {
	t.Helper()
	needFiles(t, 4*n+64)
	opts.Args = append([]string{"--enable-debug-command", "yes"}, opts.Args...)
	out := make([]*server.Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, startAtOnce)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = server.Start(context.Background(), opts)
		})
	}
	wg.Wait()
	t.Cleanup(func() { stopAll(t, out) })
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("cannot start %d servers for this test (install redis-server or valkey-server): %v", n, err)
	}
	return out
}

// stopAll stops the servers at once: one after another, servers at hz 1
// take up to a second each to act on SIGTERM (the server shuts down from
// its cron), minutes for a fleet.
func stopAll(t testing.TB, srvs []*server.Server) {
	var wg sync.WaitGroup
	for _, s := range srvs {
		if s != nil {
			wg.Go(func() {
				if err := s.Stop(); err != nil {
					t.Errorf("stop server %s: %v", s.Addr, err)
				}
			})
		}
	}
	wg.Wait()
}

// Client opens a client of the test's own on s, for checking the server
// behind the code under test, closed when the test ends; on a server
// started with a password it authenticates with it. RESP2 and no CLIENT
// SETINFO keep it to the commands a test sends.
func Client(t testing.TB, s *server.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.Password(), Protocol: 2, DisableIdentity: true,
		ReadTimeout: 30 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// Populate has the server behind c create keys keys "prefix:0" .. of size
// bytes each (DEBUG POPULATE: in the server, in one command), failing the
// test if it refuses.
func Populate(t testing.TB, c *redis.Client, keys int, prefix string, size int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Do(ctx, "DEBUG", "POPULATE", keys, prefix, size).Err(); err != nil {
		t.Fatalf("DEBUG POPULATE %d %s %d: %v", keys, prefix, size, err)
	}
}

// StartSlowSave starts a server to watch a save run on: it holds keys
// keys "key:0" .. of size bytes, and saving each takes delayUS
// microseconds more (rdb-key-save-delay), so a save lasts about keys x
// delayUS. It returns the server and a client of the test's own.
func StartSlowSave(t testing.TB, keys, size, delayUS int) (*server.Server, *redis.Client) {
	t.Helper()
	s := Start(t, server.Options{Args: []string{"--rdb-key-save-delay", strconv.Itoa(delayUS)}})
	c := Client(t, s)
	Populate(t, c, keys, "key", size)
	return s, c
}

// Freeze stops s (SIGSTOP) until thaw is called, or the test ends: a
// test that fails while s is frozen leaves no stopped process behind.
// thaw (SIGCONT) may be called more than once; it fails the test if the
// signal cannot be sent.
func Freeze(t testing.TB, s *server.Server) (thaw func()) {
	t.Helper()
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	thaw = func() {
		t.Helper()
		once.Do(func() {
			if err := s.Thaw(); err != nil {
				t.Fatalf("thaw %s: %v", s.Addr, err)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}

// InfoInt is the integer field of c's INFO section, failing the test when
// the server does not answer or has no such field.
func InfoInt(t testing.TB, c *redis.Client, section, field string) int64 {
	t.Helper()
	text, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	return InfoField(t, text, field)
}

// InfoField is the integer field of INFO's text, failing the test when it
// has no such field or the field is no integer.
func InfoField(t testing.TB, info, field string) int64 {
	t.Helper()
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %v", field, err)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s", field)
	return 0
}

// WaitFor polls cond every 10 ms until it holds, and fails the test when
// it still does not after within. It waits for a condition, never for a
// fixed time.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !poll(within, 10*time.Millisecond, cond) {
		t.Fatalf("timed out after %s waiting for %s", within, what)
	}
}

// Receive takes values from ch until match holds for one, and returns it
// and true; false when none did within. Every value taken goes through
// match, so a caller keeps what it saw there. It waits for a value, never
// for a fixed time.
func Receive[T any](ch <-chan T, within time.Duration, match func(T) bool) (T, bool) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case v := <-ch:
			if match(v) {
				return v, true
			}
		case <-timer.C:
			var zero T
			return zero, false
		}
	}
}

// poll calls cond every tick until it holds or within has passed, and
// reports whether it held.
func poll(within, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}
