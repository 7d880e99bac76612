package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/watch"
)

// methodSetting is the setting bench --methods changes, and
// infraSetting the one that decides whether forkless can be set at all
// (startup only: changing it takes a restart).
const (
	methodSetting = "bgsave-default-method"
	infraSetting  = "forkless-infrastructure-enabled"
)

// DefaultRestoreWithin bounds how long bench tries to put the server's
// method back at the end (reconnecting as it goes) before it gives up
// and says how to do it by hand.
const DefaultRestoreWithin = 15 * time.Second

// RestoreError says the server's bgsave-default-method could not be put
// back: what it was, and the command that puts it back by hand. Run is
// what ended the bench (nil when the runs ended as meant); errors.Is
// looks into both.
type RestoreError struct {
	Addr     string
	Original string
	Command  string // for a user to type: valkey-cli with the server's address, never its password
	Err      error  // why the last attempt failed
	Run      error
}

func (e *RestoreError) Error() string {
	return fmt.Sprintf("%s: %s is NOT back to %s (%v): put it back by hand: %s",
		e.Addr, methodSetting, e.Original, e.Err, e.Command)
}

func (e *RestoreError) Unwrap() []error { return []error{e.Err, e.Run} }

// methodGuard changes bgsave-default-method of one server for bench
// --methods and puts the server's own setting back: it remembers the
// setting before the first change, and restore puts it back over a new
// connection if the old one is gone, whatever ended the runs.
type methodGuard struct {
	c        *redis.Client
	ep       source.Endpoint
	name     string
	original string
	// touched: a CONFIG SET went out (answered or not): the setting may
	// differ from original until restore has read it back.
	touched  bool
	within   time.Duration
	progress func(format string, a ...any)
}

// armMethods checks, before anything is loaded or run, that the server
// can save each way of methods: it reads the setting (a server without it
// is refused on reads alone), then sets each method in turn and reads it
// back, so that a refusal comes now, in the server's own words, and a
// user without CONFIG SET is told before any run. Whatever it set, it
// leaves the server's own setting in place again; the guard it returns
// restores that at the end.
func (b *bencher) armMethods(ctx context.Context, srv int) (*methodGuard, error) {
	ep := b.cfg.Targets[srv].Save
	opts, err := watch.RedisOptions(ep)
	if err != nil {
		return nil, err
	}
	g := &methodGuard{c: redis.NewClient(opts), ep: ep, name: b.names[srv], within: b.cfg.RestoreWithin, progress: b.progress}
	cfg, err := g.read(ctx, methodSetting, infraSetting)
	if err != nil {
		g.c.Close()
		return nil, err
	}
	orig, ok := cfg[methodSetting]
	if !ok {
		err := fmt.Errorf("cannot save both ways: CONFIG GET %s answers no such setting (%s); "+
			"choosing the method takes Valkey 9.2 or later, started with %s yes (a restart)", methodSetting, g.serverIs(ctx), infraSetting)
		g.c.Close()
		return nil, err
	}
	g.original = orig
	for _, m := range append(slices.Clone(b.cfg.Methods), orig) {
		if err := g.set(ctx, m); err != nil {
			infra := cfg[infraSetting]
			if m == "forkless" && infra != "yes" {
				err = fmt.Errorf("%w; %s is %q: it takes %s yes at startup (a restart), CONFIG SET cannot change it",
					err, infraSetting, infra, infraSetting)
			}
			return g, err
		}
	}
	return g, nil
}

// serverIs names the server and its version from INFO server, for a
// refusal; what could not be read is said as such.
func (g *methodGuard) serverIs(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text, err := g.c.Info(ctx, "server").Result()
	if err != nil {
		return "INFO server: " + err.Error()
	}
	in := source.ParseInfo(text)
	name := in.ServerName
	if name == "" {
		name = "redis" // Redis has no server_name; Valkey says valkey
	}
	return "the server is " + name + " " + in.Version
}

// read is CONFIG GET of each of names, one a call (servers before 7.0
// take one pattern only): each setting the server has, by name.
func (g *methodGuard) read(ctx context.Context, names ...string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out := map[string]string{}
	for _, n := range names {
		vals, err := g.c.ConfigGet(ctx, n).Result()
		if err != nil {
			return nil, fmt.Errorf("CONFIG GET %s: %w", n, err)
		}
		if v, ok := vals[n]; ok {
			out[n] = v
		}
	}
	return out, nil
}

// set is CONFIG SET of the method, read back with CONFIG GET: a reply of
// OK that did not change the setting is an error too.
func (g *methodGuard) set(ctx context.Context, method string) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if method != g.original {
		g.touched = true // answered or not, it may have changed
	}
	if err := g.c.ConfigSet(sctx, methodSetting, method).Err(); err != nil {
		return fmt.Errorf("CONFIG SET %s %s: %w", methodSetting, method, err)
	}
	cfg, err := g.read(ctx, methodSetting)
	if err != nil {
		return err
	}
	if got := cfg[methodSetting]; got != method {
		return fmt.Errorf("CONFIG SET %s %s answered OK, but CONFIG GET reads %q", methodSetting, method, got)
	}
	return nil
}

// restore puts the server's own method back, read back, after whatever
// ended the bench (run: nil, an error, ctrl+c). It retries over new
// connections, a second apart, until within has passed since it began;
// then it gives up with a RestoreError. ctx's cancellation does not stop
// it: ctrl+c is what it must survive.
func (g *methodGuard) restore(ctx context.Context, run error) error {
	defer g.c.Close()
	if !g.touched {
		return run
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.within)
	defer cancel()
	said := false
	for {
		err := g.putBack(ctx)
		if err == nil {
			g.progress("%s: %s is %s, as before the bench (read back with CONFIG GET)", g.name, methodSetting, g.original)
			return run
		}
		if !said {
			said = true
			g.progress("%s: could not put %s back to %s yet (%v); trying again for up to %s",
				g.name, methodSetting, g.original, err, g.within)
		}
		retry := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			retry.Stop()
			return &RestoreError{Addr: g.name, Original: g.original, Command: byHand(g.ep, g.original), Err: err, Run: run}
		case <-retry.C:
		}
	}
}

// putBack is one attempt: nothing is sent but a read where the setting
// is already the server's own.
func (g *methodGuard) putBack(ctx context.Context) error {
	cfg, err := g.read(ctx, methodSetting)
	switch {
	case err != nil:
		return err
	case cfg[methodSetting] == g.original:
		return nil
	}
	return g.set(ctx, g.original)
}

// byHand is the valkey-cli command that sets the method of ep to method:
// the server's address, user and TLS as valkey-cli takes them, never the
// password (--askpass asks for it).
func byHand(ep source.Endpoint, method string) string {
	args := []string{"valkey-cli"}
	if ep.Network == "unix" {
		args = append(args, "-s", ep.Addr)
	} else if host, port, err := net.SplitHostPort(ep.Addr); err == nil {
		args = append(args, "-h", host, "-p", port)
	} else {
		args = append(args, "-h", ep.Addr)
	}
	t := ep.TLS
	if t.Enabled {
		args = append(args, "--tls")
		for _, f := range [][2]string{{"--sni", t.SNI}, {"--cacert", t.CACert}, {"--cacertdir", t.CACertDir}, {"--cert", t.Cert}, {"--key", t.Key}} {
			if f[1] != "" {
				args = append(args, f[0], f[1])
			}
		}
		if t.Insecure {
			args = append(args, "--insecure")
		}
	}
	if ep.Username != "" {
		args = append(args, "--user", ep.Username)
	}
	if ep.Password != "" {
		args = append(args, "--askpass")
	}
	args = append(args, "CONFIG", "SET", methodSetting, method)
	for i, a := range args {
		args[i] = shellWord(a)
	}
	return strings.Join(args, " ")
}

// shellWord quotes a for a POSIX shell where it needs it.
func shellWord(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@=,+") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// CheckMethods refuses a list of methods bench cannot save by: fork and
// forkless, each once.
func CheckMethods(ms []string) error {
	seen := map[string]bool{}
	for _, m := range ms {
		if m != "fork" && m != "forkless" || seen[m] {
			return fmt.Errorf("--methods takes fork and forkless, each once, not %q", strings.Join(ms, ","))
		}
		seen[m] = true
	}
	return nil
}

// checkMethods validates cfg.Methods: fork and forkless, each once, on
// one server run alone.
func (c Config) checkMethods() error {
	if len(c.Methods) == 0 {
		return nil
	}
	if err := CheckMethods(c.Methods); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if len(c.Targets) != 1 || c.Parallel {
		return errors.New("bench: --methods saves one server both ways: give one server, without --parallel")
	}
	return nil
}
