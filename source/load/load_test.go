package load_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

func TestPreloadFillsExactlyN(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		keys, size, pipeline int
	}{
		{"defaults", 20000, 0, 0},
		{"odd batches", 1001, 123, 7},
		{"one key", 1, 17, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := servertest.StartWithClient(t)
			ctx := context.Background()
			var calls [][2]int
			err := load.Preload(ctx, &redis.Options{Addr: s.Addr},
				load.Config{Keys: tc.keys, ValueSize: tc.size, Pipeline: tc.pipeline},
				func(done, total int) { calls = append(calls, [2]int{done, total}) })
			if err != nil {
				t.Fatalf("preload: %v", err)
			}
			if n := c.DBSize(ctx).Val(); n != int64(tc.keys) {
				t.Fatalf("DBSIZE = %d, want %d", n, tc.keys)
			}
			want := tc.size
			if want == 0 {
				want = load.DefaultValueSize
			}
			// Every key is the prefix plus an index below N, and (with
			// DBSIZE == N) so every index is there exactly once.
			seen := make(map[int]bool, tc.keys)
			iter := c.Scan(ctx, 0, "*", 1000).Iterator()
			for iter.Next(ctx) {
				k := iter.Val()
				i, err := strconv.Atoi(strings.TrimPrefix(k, load.DefaultPrefix))
				if !strings.HasPrefix(k, load.DefaultPrefix) || err != nil || i < 0 || i >= tc.keys {
					t.Fatalf("unexpected key %q", k)
				}
				seen[i] = true
			}
			if err := iter.Err(); err != nil {
				t.Fatal(err)
			}
			if len(seen) != tc.keys {
				t.Fatalf("saw %d distinct indexes, want %d", len(seen), tc.keys)
			}
			for _, i := range []int{0, tc.keys / 2, tc.keys - 1} {
				k := load.DefaultPrefix + strconv.Itoa(i)
				if n := c.StrLen(ctx, k).Val(); n != int64(want) {
					t.Fatalf("STRLEN %s = %d, want %d", k, n, want)
				}
			}
			if len(calls) == 0 || calls[len(calls)-1] != [2]int{tc.keys, tc.keys} {
				t.Fatalf("last progress call %v, want done == total == %d", calls, tc.keys)
			}
			for i := 1; i < len(calls); i++ {
				if calls[i][0] < calls[i-1][0] {
					t.Fatalf("progress went backwards: %v", calls)
				}
			}
		})
	}
}

func TestPreloadStopsWhenContextEnds(t *testing.T) {
	s, c := servertest.StartWithClient(t)
	c.Ping(context.Background())
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ends the preload from its first progress report; 5M keys cannot be
	// written within the first 100 ms.
	const n = 5_000_000
	var last int
	err := load.Preload(ctx, &redis.Options{Addr: s.Addr}, load.Config{Keys: n},
		func(done, total int) { last = done; cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("preload returned %v, want context.Canceled", err)
	}
	if last >= n {
		t.Fatalf("preload reported %d keys done after being cancelled", last)
	}
}

func TestPreloadReportsServerError(t *testing.T) {
	s := servertest.Start(t, server.Options{Args: []string{"--maxmemory", "2mb", "--maxmemory-policy", "noeviction"}})
	err := load.Preload(context.Background(), &redis.Options{Addr: s.Addr}, load.Config{Keys: 100000}, nil)
	if err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Fatalf("preload into a full server returned %v, want the server's OOM error", err)
	}
}

// plainConn hides the socket behind a net.Conn that is not a syscall.Conn,
// as a TLS connection does, so that writers take the goroutine per
// connection path instead of the event loop.
type plainConn struct{ net.Conn }

// writerModes are the two ways writers drive their connections.
var writerModes = []struct {
	name string
	loop bool
	opts func(addr string) *redis.Options
}{
	{"event loop", runtime.GOOS == "linux", func(addr string) *redis.Options { return &redis.Options{Addr: addr} }},
	{"goroutines", false, func(addr string) *redis.Options {
		return &redis.Options{Addr: addr, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return plainConn{c}, nil
		}}
	}},
}

// inEachWriterMode runs test once in each of writerModes, as a subtest
// named for it.
func inEachWriterMode(t *testing.T, test func(t *testing.T, loop bool, mkopts func(string) *redis.Options)) {
	for _, m := range writerModes {
		t.Run(m.name, func(t *testing.T) { test(t, m.loop, m.opts) })
	}
}

func TestWritersTouchOnlyTheirPrefix(t *testing.T) {
	inEachWriterMode(t, testWritersTouchOnlyTheirPrefix)
}

func testWritersTouchOnlyTheirPrefix(t *testing.T, loop bool, mkopts func(string) *redis.Options) {
	s, c := servertest.StartWithClient(t)
	ctx := context.Background()
	const n = 1000
	untouched := map[string]string{
		"user:keep": "mine",
		"vkwatch":   "bare prefix without the colon",
		"vkwatch:x": "prefix with a non-numeric suffix",
	}
	for k, v := range untouched {
		if err := c.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	opts := mkopts(s.Addr)
	cfg := load.Config{Keys: n, ValueSize: 40}
	if err := load.Preload(ctx, opts, cfg, nil); err != nil {
		t.Fatal(err)
	}
	before := c.Get(ctx, "vkwatch:0").Val()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	leak := goleak.IgnoreCurrent()
	w, err := load.StartWriters(ctx, opts, cfg)
	if err != nil {
		t.Fatalf("start writers: %v", err)
	}
	if got := load.UsesEventLoop(w); got != loop {
		t.Fatalf("writers use the event loop: %v, want %v", got, loop)
	}
	var prev uint64
	servertest.WaitFor(t, 60*time.Second, "20000 SETs", func() bool {
		ops := w.Ops()
		if ops < prev {
			t.Fatalf("Ops went backwards: %d after %d", ops, prev)
		}
		prev = ops
		return ops >= 20000
	})
	w.Stop()
	w.Stop() // idempotent
	goleak.VerifyNone(t, leak)
	ops := w.Ops()
	// Read the server's command counts before this test reads any key.
	stats := c.Info(ctx, "commandstats").Val()
	if w.Errors() != 0 || w.LastError() != nil || w.Misses() != 0 {
		t.Fatalf("writers reported %d errors (last %v) and %d missing keys", w.Errors(), w.LastError(), w.Misses())
	}

	for k, v := range untouched {
		if got := c.Get(ctx, k).Val(); got != v {
			t.Fatalf("%s = %q after the writers ran, want %q", k, got, v)
		}
	}
	if got := c.DBSize(ctx).Val(); got != n+int64(len(untouched)) {
		t.Fatalf("DBSIZE = %d, want %d", got, n+len(untouched))
	}
	// Same value bytes, so a rewritten key looks the same; the server's
	// own count of SETs shows that the writers wrote, and wrote nothing else.
	if got := c.Get(ctx, "vkwatch:0").Val(); got != before {
		t.Fatalf("vkwatch:0 changed value from %q to %q", before, got)
	}
	var sets uint64
	for _, line := range strings.Split(stats, "\r\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		cmd, _, _ := strings.Cut(strings.TrimPrefix(name, "cmdstat_"), "|")
		switch cmd {
		case "set":
			calls := strings.TrimPrefix(strings.Split(rest, ",")[0], "calls=")
			sets, _ = strconv.ParseUint(calls, 10, 64)
		case "ping", "client", "config", "info", "hello", "select", "auth":
			// handshake and this test's own commands
		default:
			t.Fatalf("the server ran %s while only writers were connected: %s", cmd, line)
		}
	}
	// A SET sent just before Stop may have run without its reply being
	// read: the server may count up to one more per writer.
	if sets < ops || sets > ops+load.DefaultWriters {
		t.Fatalf("server counted %d SETs, writers %d", sets, ops)
	}
}

func TestWritersSurviveErrorsAndRecover(t *testing.T) {
	inEachWriterMode(t, testWritersSurviveErrorsAndRecover)
}

func testWritersSurviveErrorsAndRecover(t *testing.T, loop bool, mkopts func(string) *redis.Options) {
	s, c := servertest.StartWithClient(t)
	ctx := context.Background()
	opts := mkopts(s.Addr)
	cfg := load.Config{Keys: 10000, Writers: 2}
	if err := load.Preload(ctx, opts, cfg, nil); err != nil {
		t.Fatal(err)
	}
	w, err := load.StartWriters(ctx, opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := load.UsesEventLoop(w); got != loop {
		t.Fatalf("writers use the event loop: %v, want %v", got, loop)
	}
	defer w.Stop()

	// A full server refuses SETs (SET is a denyoom command, even when it
	// only overwrites): OOM is counted and surfaced, and the writers go on.
	if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, 30*time.Second, "an OOM error", func() bool {
		err := w.LastError()
		return err != nil && strings.Contains(err.Error(), "OOM")
	})
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	ops := w.Ops()
	servertest.WaitFor(t, 30*time.Second, "SETs to succeed again", func() bool { return w.Ops() > ops+100 })

	// A server that dies and comes back: the writers reconnect.
	errs := w.Errors()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, 30*time.Second, "connection errors", func() bool { return w.Errors() > errs })
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// The server comes back empty (it saves nothing): load the keyspace
	// again for the writers to overwrite.
	if err := load.Preload(ctx, opts, cfg, nil); err != nil {
		t.Fatal(err)
	}
	ops = w.Ops()
	servertest.WaitFor(t, 30*time.Second, "SETs after the restart", func() bool { return w.Ops() > ops+100 })
}

func TestStartWritersFailsWithoutServer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	port := servertest.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := load.StartWriters(ctx, &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)}, load.Config{Keys: 10})
	if err == nil {
		w.Stop()
		t.Fatal("writers started against a closed port")
	}
	if _, err := load.StartWriters(ctx, &redis.Options{Addr: "127.0.0.1:1"}, load.Config{}); err == nil {
		t.Fatal("writers started without a keyspace")
	}
}

// TestWritersNeverCreateKeys: on a keyspace that is only half there, the
// writers overwrite the keys that exist and create none (SET XX), and
// count the SETs that found no key.
func TestWritersNeverCreateKeys(t *testing.T) {
	inEachWriterMode(t, func(t *testing.T, _ bool, mkopts func(string) *redis.Options) {
		s, c := servertest.StartWithClient(t)
		ctx := context.Background()
		opts := mkopts(s.Addr)
		if err := load.Preload(ctx, opts, load.Config{Keys: 500, ValueSize: 40}, nil); err != nil {
			t.Fatal(err)
		}
		w, err := load.StartWriters(ctx, opts, load.Config{Keys: 1000, ValueSize: 40, Writers: 2})
		if err != nil {
			t.Fatal(err)
		}
		servertest.WaitFor(t, 60*time.Second, "5000 SETs", func() bool { return w.Ops()+w.Misses() >= 5000 })
		w.Stop()
		if w.Errors() != 0 {
			t.Fatalf("%d errors, last %v", w.Errors(), w.LastError())
		}
		if n := c.DBSize(ctx).Val(); n != 500 {
			t.Errorf("DBSIZE %d after the writers ran, want the 500 preloaded", n)
		}
		// Half the keyspace is missing: about half the SETs miss.
		ops, misses := w.Ops(), w.Misses()
		if ops == 0 || misses == 0 || misses < ops/3 || misses > 3*ops {
			t.Errorf("%d SETs overwrote a key and %d found none; want about as many of each", ops, misses)
		}
	})
}
