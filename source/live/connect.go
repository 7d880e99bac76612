// Package live wires a run's sources together: the fleet watched, its
// events fanned out to a recording, the save reports, the OpenMetrics
// exporter and the UI's queue, and what goes wrong in its goroutines. It
// draws nothing: the commands start a run here and hand its events to ui.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/watch"
)

// DefaultConnectTimeout is how long a server has to answer at start,
// unless the user says otherwise (--connect-timeout).
const DefaultConnectTimeout = 3 * time.Second

// UnreachableError is a run that cannot begin: no server could be
// reached (refused, unknown host, authentication, ACL, TLS, timeout).
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return e.Err.Error() }
func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable marks err as a run that cannot begin; nil stays nil.
func Unreachable(err error) error {
	if err == nil {
		return nil
	}
	return &UnreachableError{Err: err}
}

// Reach connects to each server once, as a watcher does, so that a server
// that cannot be reached is an UnreachableError, in the monitor's words,
// before any work starts; then warns to w of a password given to a server
// that has none (WarnNoPassword).
func Reach(ctx context.Context, w io.Writer, eps []source.Endpoint) error {
	clock := source.NewClock()
	var errs []error
	for _, ep := range eps {
		wt := watch.New(ep.Node(), ep, clock, watch.Config{ConnectTimeout: DefaultConnectTimeout})
		_, err := wt.Connect(ctx)
		wt.Close()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return Unreachable(errors.Join(errs...))
	}
	WarnNoPassword(ctx, w, eps)
	return nil
}

// WarnNoPassword gives valkey-cli's warning, to w, where a password was
// given to a server that asks for none. valkey-cli sends AUTH with the
// password alone; such a server answers "ERR AUTH <password> called
// without any password configured for the default user. Are you sure
// your configuration is correct?", and valkey-cli prints "AUTH failed: "
// and that answer, and goes on. vkwatch authenticates with HELLO's AUTH
// default PASSWORD, which a server without a password (its default user
// nopass) accepts without a word: so it asks each server the way
// valkey-cli does, once, on a connection of its own without credentials,
// after the server answered vkwatch's own. A user named (--user, the URL,
// VALKEYCLI_USER) has a password of its own: nothing to warn of. Only the
// servers given are asked (a cluster's seed, not every node).
func WarnNoPassword(ctx context.Context, w io.Writer, eps []source.Endpoint) {
	for _, ep := range eps {
		if ep.Password == "" || ep.Username != "" {
			continue
		}
		opts, err := watch.RedisOptions(ep)
		if err != nil {
			continue
		}
		opts.Password, opts.DB = "", 0
		opts.DialTimeout, opts.ReadTimeout, opts.MaxRetries = DefaultConnectTimeout, DefaultConnectTimeout, -1
		c := redis.NewClient(opts)
		err = c.Do(ctx, "AUTH", ep.Password).Err()
		c.Close()
		var rerr redis.Error
		if errors.As(err, &rerr) && strings.Contains(err.Error(), "without any password configured") {
			fmt.Fprintf(w, "Warning: %s: AUTH failed: %s\n", inert.Text(ep.String()), inert.Text(clip(err.Error(), 300)))
		}
	}
}

// clip cuts what a server said to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ConnectFleet finds the fleet's nodes and connects to each, as the
// monitor and save both begin. One node that answers is enough to go on
// (the others show their error in their place); when none does, the
// error is every node's, an UnreachableError.
func ConnectFleet(ctx context.Context, f *fleet.Fleet) (source.Topology, []fleet.Connected, error) {
	top, err := f.Start(ctx)
	if err != nil {
		return source.Topology{}, nil, Unreachable(err)
	}
	conns := f.Connect(ctx)
	var errs []error
	for _, c := range conns {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	if len(errs) == len(conns) {
		return top, conns, Unreachable(errors.Join(errs...))
	}
	return top, conns, nil
}
