// Package demo sets up vkwatch's one-command, side-by-side demo: two
// throwaway servers from the same binary, filled with the same keyspace,
// differing in one thing only. On a server with forkless save (Valkey 9.2+)
// that thing is the save method, both under the same write load, as in the
// seed experiment; elsewhere it is the load: one idle, one written to, which
// shows that copy-on-write only costs while pages are written during a save.
//
// The command adds flags and opens the monitor on Demo.Options; this package
// only starts, fills, loads and tears down.
package demo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server"
)

// Scenario names what differs between the two servers.
type Scenario string

const (
	ScenarioAuto     Scenario = "auto"             // forkless when the binary has it, else idle-vs-load
	ScenarioForkless Scenario = "fork-vs-forkless" // left fork, right forkless (binary must support forkless)
	ScenarioLoad     Scenario = "idle-vs-load"     // same method, left idle, right under write load
)

// Defaults of Config's zero fields: the seed experiment's dataset shape,
// scaled to 1M keys (about 400 MB per server) so a laptop runs two.
const (
	DefaultKeys      = 1_000_000
	DefaultValueSize = 300
	DefaultWriters   = 8
)

// probeTimeout bounds the start that tells whether the binary knows
// forkless save; a server that lacks it exits at once on the unknown option.
const probeTimeout = 10 * time.Second

// Config says how to set the demo up. Zero values are the defaults.
type Config struct {
	ServerBin string           // "" = server.Find("")
	Keys      int              // default 1_000_000
	ValueSize int              // default 300
	Writers   int              // default 8 per loaded server
	Scenario  Scenario         // default auto
	SaveDelay int              // rdb-key-save-delay microseconds on both (0 = leave default)
	Progress  func(msg string) // status lines while starting (printed before the UI opens)
}

// Demo is the running pair of servers. Index 0 is the left pane, 1 the right.
type Demo struct {
	Servers  [2]*server.Server
	Scenario Scenario
	Why      string           // one line for the banner: which scenario and why
	Writers  [2]*load.Writers // nil where that side is idle
	Options  [2]*redis.Options

	cancel    context.CancelFunc // ends the writers' context
	closeOnce sync.Once
	closeErr  error
}

// Start starts both servers in parallel (each in a temporary directory of
// its own), preloads them in parallel and starts the writers of the
// scenario. On any failure half way, or a panic, everything already started
// is stopped and removed before it returns.
//
// ctx bounds the start only: the writers run until Close.
func Start(ctx context.Context, cfg Config) (d *Demo, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	say := func(format string, a ...any) {
		if cfg.Progress != nil {
			cfg.Progress(fmt.Sprintf(format, a...))
		}
	}
	bin, err := server.Find(cfg.ServerBin)
	if err != nil {
		return nil, err
	}
	name := describe(ctx, bin)

	scenario, err := chooseScenario(ctx, cfg.Scenario, bin, name, say)
	if err != nil {
		return nil, err
	}

	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d = &Demo{Scenario: scenario, cancel: cancel}
	// Runs on every failed return and on a panic too (which goes on
	// after the cleanup): nothing half-started outlives Start.
	defer func() {
		if r := recover(); r != nil {
			d.Close()
			panic(r)
		}
		if err != nil {
			d.Close()
			d = nil
		}
	}()

	args, why := cfg.serverArgs(scenario, name)
	d.Why = why
	say("starting two %s", name)
	if err := d.startServers(ctx, bin, args); err != nil {
		return d, err
	}
	for i, s := range d.Servers {
		d.Options[i] = &redis.Options{Addr: s.Addr}
	}

	lcfg := load.Config{Keys: cfg.Keys, ValueSize: cfg.ValueSize, Writers: cfg.Writers}
	if err := d.preload(ctx, lcfg, say); err != nil {
		return d, err
	}

	return d, d.startWriters(wctx, [2]bool{scenario == ScenarioForkless, true}, lcfg, say)
}

// chooseScenario settles auto: forkless when the binary has it, else idle
// against load. Forkless asked of a binary without it is an error that
// says which binary and what to use instead.
func chooseScenario(ctx context.Context, want Scenario, bin, name string, say func(string, ...any)) (Scenario, error) {
	if want == ScenarioLoad {
		return want, nil
	}
	say("checking whether %s has forkless save", name)
	ok, err := supportsForkless(ctx, bin)
	switch {
	case err != nil:
		return "", err
	case ok:
		return ScenarioForkless, nil
	case want == ScenarioForkless:
		return "", fmt.Errorf("demo: %s has no forkless save (it refuses --forkless-infrastructure-enabled, which Valkey 9.2 added); "+
			"use scenario %s, or a valkey-server 9.2 or later", name, ScenarioLoad)
	}
	return ScenarioLoad, nil
}

// serverArgs are the two servers' extra arguments in the scenario (the
// one difference between them, and the save delay on both), and the
// banner's line saying why.
func (cfg Config) serverArgs(scenario Scenario, name string) (args [2][]string, why string) {
	switch scenario {
	case ScenarioForkless:
		// Both servers carry the forkless bookkeeping (about 4 bytes a
		// key) so that the save method is the only difference.
		for i, method := range []string{"fork", "forkless"} {
			args[i] = []string{"--forkless-infrastructure-enabled", "yes", "--bgsave-default-method", method}
		}
		why = fmt.Sprintf("%s has forkless save: left fork, right forkless, both under %d writers", name, cfg.Writers)
	default:
		if cfg.Scenario == ScenarioLoad {
			why = fmt.Sprintf("%s, same save method on both: left idle, right under %d writers", name, cfg.Writers)
		} else {
			why = fmt.Sprintf("%s has no forkless save: left idle, right under %d writers", name, cfg.Writers)
		}
	}
	if cfg.SaveDelay > 0 {
		for i := range args {
			args[i] = append(args[i], "--rdb-key-save-delay", strconv.Itoa(cfg.SaveDelay))
		}
	}
	return args, why
}

// startWriters starts the write load on each loaded server, under wctx
// (which outlives Start).
func (d *Demo) startWriters(wctx context.Context, loaded [2]bool, lcfg load.Config, say func(string, ...any)) error {
	for i := range d.Servers {
		if !loaded[i] {
			continue
		}
		say("starting %d writers on the %s server", lcfg.Writers, side(i))
		w, err := load.StartWriters(wctx, d.Options[i], lcfg)
		if err != nil {
			return fmt.Errorf("demo: writers on the %s server: %w", side(i), err)
		}
		d.Writers[i] = w
	}
	return nil
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Keys == 0 {
		cfg.Keys = DefaultKeys
	}
	if cfg.ValueSize == 0 {
		cfg.ValueSize = DefaultValueSize
	}
	if cfg.Writers == 0 {
		cfg.Writers = DefaultWriters
	}
	if cfg.Scenario == "" {
		cfg.Scenario = ScenarioAuto
	}
	switch {
	case cfg.Keys < 0 || cfg.ValueSize < 0 || cfg.Writers < 0:
		return cfg, fmt.Errorf("demo: keys (%d), value size (%d) and writers (%d) must not be negative",
			cfg.Keys, cfg.ValueSize, cfg.Writers)
	case cfg.SaveDelay < 0:
		return cfg, fmt.Errorf("demo: save delay %d must not be negative", cfg.SaveDelay)
	}
	switch cfg.Scenario {
	case ScenarioAuto, ScenarioForkless, ScenarioLoad:
	default:
		return cfg, fmt.Errorf("demo: unknown scenario %q (want %s, %s or %s)",
			cfg.Scenario, ScenarioAuto, ScenarioForkless, ScenarioLoad)
	}
	return cfg, nil
}

func side(i int) string {
	if i == 0 {
		return "left"
	}
	return "right"
}

// startServers starts both servers in parallel; those that started are
// kept in d even when the other failed, for Close to stop.
func (d *Demo) startServers(ctx context.Context, bin string, args [2][]string) error {
	var errs [2]error
	var wg sync.WaitGroup
	for i := range d.Servers {
		wg.Go(func() {
			d.Servers[i], errs[i] = server.Start(ctx, server.Options{Bin: bin, Args: args[i]})
			if errs[i] != nil {
				errs[i] = fmt.Errorf("demo: %s server: %w", side(i), errs[i])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs[0], errs[1])
}

// preload fills both servers in parallel, saying how far they are about
// once a second.
func (d *Demo) preload(ctx context.Context, cfg load.Config, say func(string, ...any)) error {
	say("preloading %d keys of %d bytes into each server", cfg.Keys, cfg.ValueSize)
	var done [2]atomic.Int64
	var errs [2]error
	finished := make(chan struct{})
	var wg sync.WaitGroup
	for i := range d.Servers {
		wg.Go(func() {
			errs[i] = load.Preload(ctx, d.Options[i], cfg, func(n, _ int) { done[i].Store(int64(n)) })
			if errs[i] != nil {
				errs[i] = fmt.Errorf("demo: preload of the %s server: %w", side(i), errs[i])
			}
		})
	}
	go func() {
		wg.Wait()
		close(finished)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	pct := func(i int) int64 { return done[i].Load() * 100 / int64(max(cfg.Keys, 1)) }
	for {
		select {
		case <-tick.C:
			say("preloading: left %d%%, right %d%%", pct(0), pct(1))
		case <-finished:
			return errors.Join(errs[0], errs[1])
		}
	}
}

// Close stops the writers, shuts both servers down and removes their
// temporary directories. It is safe to call more than once.
func (d *Demo) Close() error {
	if d == nil {
		return nil
	}
	d.closeOnce.Do(func() {
		if d.cancel != nil {
			d.cancel()
		}
		for _, w := range d.Writers {
			if w != nil {
				w.Stop()
			}
		}
		var errs [2]error
		var wg sync.WaitGroup
		for i, s := range d.Servers {
			if s != nil {
				wg.Go(func() { errs[i] = s.Stop() })
			}
		}
		wg.Wait()
		d.closeErr = errors.Join(errs[0], errs[1])
	})
	return d.closeErr
}

// supportsForkless starts the binary once with forkless-infrastructure-enabled:
// a server without forkless save refuses the unknown option at once. Any
// other failure to start is returned, since the demo's servers would fail
// the same way.
func supportsForkless(ctx context.Context, bin string) (bool, error) {
	s, err := server.Start(ctx, server.Options{
		Bin:          bin,
		Args:         []string{"--forkless-infrastructure-enabled", "yes"},
		StartTimeout: probeTimeout,
	})
	if err == nil {
		return true, s.Stop()
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	msg := err.Error()
	if strings.Contains(msg, "forkless-infrastructure-enabled") || strings.Contains(msg, "Bad directive") {
		return false, nil
	}
	return false, fmt.Errorf("demo: cannot start %s: %w", filepath.Base(bin), err)
}

var versionRE = regexp.MustCompile(`v=([0-9][^ ]*)`)

// describe names the binary for messages: "redis-server 7.0.15". The
// version comes from --version, which starts no server.
func describe(ctx context.Context, bin string) string {
	name := filepath.Base(bin)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return name
	}
	if m := versionRE.FindSubmatch(out); m != nil {
		return name + " " + string(m[1])
	}
	return name
}
