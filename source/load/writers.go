package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Backoff after a failed SET: short enough that writers resume promptly
// once the server accepts writes again, long enough not to spin on an OOM or
// READONLY server (or a dead one) and burn the CPU the server needs.
const (
	minBackoff = 10 * time.Millisecond
	maxBackoff = time.Second
)

// dialAll opens n raw connections in parallel; on any failure it closes
// those that opened and returns the first error.
func dialAll(ctx context.Context, opts *redis.Options, n int) ([]*rawConn, error) {
	conns := make([]*rawConn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { conns[i], errs[i] = dialRaw(ctx, opts) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range conns {
			if c != nil {
				c.close()
			}
		}
		return nil, fmt.Errorf("load: connect: %w", errs[firstNonNil(errs)])
	}
	return conns, nil
}

func firstNonNil(errs []error) int {
	for i, e := range errs {
		if e != nil {
			return i
		}
	}
	return 0
}

// Writers overwrite random keys of the prefix (within 0..Keys-1) as fast
// as they can until ctx ends or Stop, each on its own connection, never
// reading, creating or deleting anything: SET ... XX sets a key only when
// it exists, as the seed's writers SET random existing keys (see
// CheckKeyspace for the check before starting them). Each writer waits for the reply to its SET before
// sending the next, like a redis-benchmark client without pipelining, so
// the load is what Writers clients at full speed put on the server.
type Writers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ops    atomic.Uint64
	misses atomic.Uint64
	errs   atomic.Uint64
	last   atomic.Pointer[error]
	loop   bool // driven by the event loop rather than a goroutine each
}

// StartWriters connects cfg.Writers connections and starts writing. It
// returns once all writers are connected, or an error (and nothing running)
// if any cannot connect. cfg.Keys must be positive.
func StartWriters(ctx context.Context, opts *redis.Options, cfg Config) (*Writers, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Keys <= 0 {
		return nil, fmt.Errorf("load: writers need a keyspace, got %d keys", cfg.Keys)
	}
	conns, err := dialAll(ctx, opts, cfg.Writers)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Writers{cancel: cancel}
	value := makeValue(cfg.ValueSize)
	if w.startEventLoop(ctx, opts, cfg, conns, value) {
		w.loop = true
		return w, nil
	}
	for i, c := range conns {
		rng := rand.New(rand.NewPCG(rand.Uint64(), uint64(i)))
		w.wg.Go(func() { w.run(ctx, opts, cfg, c, value, rng) })
	}
	return w, nil
}

// run is one writer. It reconnects after a lost connection and backs off
// after any failure; it returns only when ctx ends.
func (w *Writers) run(ctx context.Context, opts *redis.Options, cfg Config, c *rawConn, value []byte, rng *rand.Rand) {
	backoff := time.Duration(0)
	stop := context.AfterFunc(ctx, c.interrupt)
	defer func() {
		if c != nil {
			stop()
			c.close()
		}
	}()
	for ctx.Err() == nil {
		if c == nil {
			nc, err := dialRaw(ctx, opts)
			if err != nil {
				if !w.fail(ctx, err, &backoff) {
					return
				}
				continue
			}
			c, stop = nc, context.AfterFunc(ctx, nc.interrupt)
		}
		c.buf = appendSetXX(c.buf[:0], cfg.Prefix, rng.IntN(cfg.Keys), value)
		_, err := c.nc.Write(c.buf)
		if err == nil {
			err = c.readReply()
		}
		if err == nil {
			w.ops.Add(1)
			backoff = 0
			continue
		}
		if errors.Is(err, errNoKey) {
			w.misses.Add(1)
			backoff = 0
			continue
		}
		var se ServerError
		if !errors.As(err, &se) {
			// The connection is out of step or gone: start a new one.
			stop()
			c.close()
			c = nil
		}
		if !w.fail(ctx, err, &backoff) {
			return
		}
	}
}

// record counts err as a failure and keeps it as the last error, unless it
// is only the consequence of ctx ending. It reports whether to go on.
func (w *Writers) record(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	w.errs.Add(1)
	w.last.Store(&err)
	return true
}

// nextBackoff doubles the backoff within [minBackoff, maxBackoff].
func nextBackoff(b time.Duration) time.Duration {
	return min(max(b*2, minBackoff), maxBackoff)
}

// fail records err and waits out the backoff. It reports whether the writer
// should go on.
func (w *Writers) fail(ctx context.Context, err error, backoff *time.Duration) bool {
	if !w.record(ctx, err) {
		return false
	}
	*backoff = nextBackoff(*backoff)
	t := time.NewTimer(*backoff)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Ops returns the cumulative number of SETs that overwrote a key. It is one atomic
// load, cheap enough to call on every sample.
func (w *Writers) Ops() uint64 { return w.ops.Load() }

// Misses returns the cumulative number of SETs that found no key to
// overwrite (SET XX answered nil): nothing was written.
func (w *Writers) Misses() uint64 { return w.misses.Load() }

// Errors returns the cumulative number of failed SETs and connection attempts.
func (w *Writers) Errors() uint64 { return w.errs.Load() }

// LastError returns the most recent failure, nil when none happened.
func (w *Writers) LastError() error {
	if p := w.last.Load(); p != nil {
		return *p
	}
	return nil
}

// Stop stops every writer, waits for its goroutine to end and closes its
// connection. It is safe to call more than once.
func (w *Writers) Stop() {
	w.cancel()
	w.wg.Wait()
}
