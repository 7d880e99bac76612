package watch

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
)

// quietLogger silences go-redis, which otherwise logs dial failures to
// stderr, right through a terminal UI. Errors reach the user as events.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

// QuietRedis silences go-redis's logger for the whole process, as every
// Watcher does: other packages' clients (cluster discovery) call it too.
func QuietRedis() { quietOnce.Do(func() { redis.SetLogger(quietLogger{}) }) }

// client returns the client in *slot, making one if there is none; nil
// once the watcher is closed.
func (w *Watcher) client(slot **redis.Client, poolTimeout time.Duration) *redis.Client {
	w.clientsMu.Lock()
	defer w.clientsMu.Unlock()
	if w.closed {
		return nil
	}
	if *slot == nil {
		o := *w.opts
		o.PoolTimeout = poolTimeout
		*slot = redis.NewClient(&o)
		(*slot).AddHook(ownCounter{n: &w.ownCmds, by: &w.ownByName})
	}
	return *slot
}

// ownCounter counts, in n, every command of a watcher's client that the
// server executed, and so counted in total_commands_processed: the
// sampler's INFO and CONFIG GET, and the commands go-redis sends to set up
// each new connection (HELLO, AUTH, SELECT), which pass through the
// client's hooks too. A new connection can come at any moment (go-redis
// sends pipelines on a pool of their own; a connection is replaced after an
// error), so only counting them all keeps vkwatch's own commands out of
// the ops/s of every interval, the first one included. An error reply
// means the server refused the command before running it (unknown, NOPERM,
// wrong arity, LOADING) and did not count it; a transport error, that it
// may never have seen it. The user's command sent with Do (marked in its
// context, see userCmd) is not counted: it is load the user asked for.
// by keeps the same counts by command, for the observer cost.
type ownCounter struct {
	n  *atomic.Uint64
	by *ownCalls
}

// userCmd is the context key under which Do marks the user's command.
type userCmd struct{}

func executed(cmd redis.Cmder) bool {
	err := cmd.Err()
	return err == nil || errors.Is(err, redis.Nil)
}

func (ownCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h ownCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		// The hook's error too: Client.Process sets the command's own
		// error only after the hooks have run.
		if (err == nil || errors.Is(err, redis.Nil)) && executed(cmd) && ctx.Value(userCmd{}) != cmd {
			h.n.Add(1)
			h.by.add(cmd)
		}
		return err
	}
}

func (h ownCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if executed(cmd) {
				h.n.Add(1)
				h.by.add(cmd)
			}
		}
		return err
	}
}

// drop closes c and forgets it if it is still in *slot, so that the next
// call gets a fresh client.
func (w *Watcher) drop(slot **redis.Client, c *redis.Client) {
	w.clientsMu.Lock()
	defer w.clientsMu.Unlock()
	if *slot == c && c != nil {
		*slot = nil
		c.Close()
	}
}

// transportError reports whether err is not the server's answer: the
// connection behind it is suspect.
func transportError(err error) bool {
	var rerr redis.Error
	return err != nil && !errors.As(err, &rerr) && !errors.Is(err, redis.Nil)
}

// samplerDo sends one command on the sampler's client.
func (w *Watcher) samplerDo(ctx context.Context, args ...any) (string, error) {
	c := w.client(&w.sampler, w.cfg.ConnectTimeout)
	if c == nil {
		return "", redis.ErrClosed
	}
	text, err := c.Do(ctx, args...).Text()
	if transportError(err) {
		w.drop(&w.sampler, c)
	}
	return text, err
}

// ConnectError says why a server could not be reached, in one line:
// "ADDR: cause". Addr is the display form of the endpoint (no password).
type ConnectError struct {
	Addr  string
	Cause string
	Err   error
}

func (e *ConnectError) Error() string { return e.Addr + ": " + e.Cause }

// Unwrap returns the underlying error.
func (e *ConnectError) Unwrap() error { return e.Err }

// Connect makes one attempt, within ConnectTimeout, to dial, log in and
// read INFO, and returns who the server is or a *ConnectError.
func (w *Watcher) Connect(ctx context.Context) (source.Identity, error) {
	id, _, _, err := w.connect(ctx)
	return id, err
}

// connect is Connect that also returns the INFO text and when it arrived.
func (w *Watcher) connect(ctx context.Context) (source.Identity, string, time.Duration, error) {
	if w.optsErr != nil {
		return source.Identity{}, "", 0, &ConnectError{Addr: w.ep.String(), Cause: w.optsErr.Error(), Err: w.optsErr}
	}
	if w.isClosed() {
		return source.Identity{}, "", 0, &ConnectError{Addr: w.ep.String(), Cause: "watcher closed", Err: redis.ErrClosed}
	}
	cctx, cancel := context.WithTimeout(ctx, w.cfg.ConnectTimeout)
	defer cancel()
	text, err := w.samplerDo(cctx, connectInfoArgs...)
	at := w.clock.Offset()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return source.Identity{}, "", 0, &ConnectError{Addr: w.ep.String(), Cause: w.cause(err, w.cfg.ConnectTimeout), Err: err}
	}
	return w.identity(source.ParseInfo(text)), text, at, nil
}

func (w *Watcher) identity(in source.Info) source.Identity {
	name := in.ServerName
	if name == "" {
		name = "redis"
	}
	return source.Identity{
		Addr: w.ep.String(), ServerName: name, Version: in.Version, Role: in.Role,
		ProcessID: in.ProcessID, Local: w.ep.Local(), Cluster: in.ClusterEnabled.V == 1,
	}
}
