// Package load is vkwatch's built-in write load: it fills a keyspace
// (Preload) and then keeps overwriting random keys of it from several
// connections (Writers), as the seed experiment's eight SET threads did.
// Copy-on-write only costs memory while pages are written during a save, so
// a save watched without load shows almost nothing.
//
// Every key it writes is Prefix followed by a decimal index in 0..Keys-1.
// It never reads, deletes or touches any other key.
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

// DefaultPrefix is the key prefix used when Config.Prefix is empty.
const DefaultPrefix = "vkwatch:"

// Defaults of Config's zero fields.
const (
	DefaultValueSize = 300
	DefaultWriters   = 8
	DefaultPipeline  = 256
)

// preloadConns is how many connections Preload spreads its pipelines over.
// More than one keeps the server busy while the client formats the next
// batch; more than a few only adds contention on a small machine.
const preloadConns = 4

// Config describes the keyspace and how hard to write it.
type Config struct {
	Prefix    string // default DefaultPrefix; every key written is Prefix + decimal index, nothing else is ever touched
	Keys      int    // keyspace size N (keys Prefix0 .. Prefix(N-1))
	ValueSize int    // bytes per value (default 300)
	Writers   int    // concurrent writer goroutines/connections (default 8)
	Pipeline  int    // preload pipeline depth (default 256)
}

func (c Config) withDefaults() (Config, error) {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.ValueSize == 0 {
		c.ValueSize = DefaultValueSize
	}
	if c.Writers == 0 {
		c.Writers = DefaultWriters
	}
	if c.Pipeline == 0 {
		c.Pipeline = DefaultPipeline
	}
	switch {
	case c.Keys < 0:
		return c, fmt.Errorf("load: negative key count %d", c.Keys)
	case c.ValueSize < 0:
		return c, fmt.Errorf("load: negative value size %d", c.ValueSize)
	case c.Writers < 0:
		return c, fmt.Errorf("load: negative writer count %d", c.Writers)
	case c.Pipeline < 0:
		return c, fmt.Errorf("load: negative pipeline depth %d", c.Pipeline)
	}
	return c, nil
}

// valueSeed fixes the value bytes so that runs are comparable.
var valueSeed = [32]byte{'v', 'k', 'w', 'a', 't', 'c', 'h'}

// makeValue returns size pseudo-random bytes. Random bytes do not compress,
// so an RDB of the keyspace is about as large as the data (the server's LZF
// compression would shrink a run of 'x' to almost nothing and make saves
// look cheaper than they are with real data).
func makeValue(size int) []byte {
	v := make([]byte, size)
	rand.NewChaCha8(valueSeed).Read(v)
	return v
}

// Preload SETs all N keys, pipelined over a few connections, calling
// progress(done, total) at most ~10 times/s (and once more at the end) from
// the calling goroutine. progress may be nil. Returns when done or ctx ends;
// the first error reply of the server (e.g. OOM) stops it and is returned.
func Preload(ctx context.Context, opts *redis.Options, cfg Config, progress func(done, total int)) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	if cfg.Keys == 0 {
		if progress != nil {
			progress(0, 0)
		}
		return nil
	}
	conns, err := dialAll(ctx, opts, min(preloadConns, (cfg.Keys+cfg.Pipeline-1)/cfg.Pipeline))
	if err != nil {
		return err
	}
	fillCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &preloader{cfg: cfg, value: makeValue(cfg.ValueSize), cancel: cancel}
	var wg sync.WaitGroup
	for _, c := range conns {
		stop := context.AfterFunc(fillCtx, c.interrupt)
		wg.Go(func() {
			defer c.close()
			defer stop()
			p.fill(fillCtx, c)
		})
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	return p.wait(ctx, finished, progress)
}

// preloader is what the connections of one Preload share: the next batch
// to take, the keys acknowledged, and the first error, which stops them
// all.
type preloader struct {
	cfg     Config
	value   []byte
	next    atomic.Int64 // first index of the next batch to take
	done    atomic.Int64 // keys acknowledged
	errOnce sync.Once
	first   error
	cancel  context.CancelFunc
}

func (p *preloader) fail(err error) {
	p.errOnce.Do(func() { p.first = err })
	p.cancel()
}

// fill takes batches of keys and SETs them on c until none is left, ctx
// ends or something fails.
func (p *preloader) fill(ctx context.Context, c *rawConn) {
	for ctx.Err() == nil {
		start := int(p.next.Add(int64(p.cfg.Pipeline))) - p.cfg.Pipeline
		if start >= p.cfg.Keys {
			return
		}
		end := min(start+p.cfg.Pipeline, p.cfg.Keys)
		if err := p.batch(c, start, end); err != nil {
			p.fail(err)
			return
		}
		p.done.Add(int64(end - start))
	}
}

// batch SETs keys start..end-1 in one write and reads every reply, even
// after an error reply, so that the connection stays in step; it returns
// the first error reply, or why the connection failed.
func (p *preloader) batch(c *rawConn, start, end int) error {
	b := c.buf[:0]
	for i := start; i < end; i++ {
		b = appendSet(b, p.cfg.Prefix, i, p.value)
	}
	c.buf = b
	if _, err := c.nc.Write(b); err != nil {
		return err
	}
	var replyErr error
	for i := start; i < end; i++ {
		if err := c.readReply(); err != nil {
			var se ServerError
			if !errors.As(err, &se) {
				return err
			}
			if replyErr == nil {
				replyErr = fmt.Errorf("load: SET %s%d: %w", p.cfg.Prefix, i, err)
			}
		}
	}
	return replyErr
}

// wait reports progress every 100 ms until the connections have finished,
// then says how the preload ended. parent is the caller's context.
func (p *preloader) wait(parent context.Context, finished <-chan struct{}, progress func(done, total int)) error {
	total := p.cfg.Keys
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if progress != nil {
				progress(int(p.done.Load()), total)
			}
		case <-finished:
			// When the caller's context ended, the interrupted reads are a
			// consequence, not the news.
			if err := parent.Err(); err != nil {
				return err
			}
			if p.first != nil {
				return p.first
			}
			if n := int(p.done.Load()); n < total {
				return fmt.Errorf("load: preload stopped after %d of %d keys", n, total)
			}
			if progress != nil {
				progress(total, total)
			}
			return nil
		}
	}
}
