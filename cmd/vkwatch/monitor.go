package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/procmem"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/ui"
)

// monitorFlags configure the live monitor (and the demo, which opens it).
type monitorFlags struct {
	interval       time.Duration
	pingInterval   time.Duration
	history        time.Duration
	connectTimeout time.Duration
	writers        int
	keys           int
	valueSize      int
	record         string
	recordFormat   string
	report         string
	readOnly       bool
}

func (f *monitorFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&f.interval, "interval", 200*time.Millisecond, "INFO sampling interval")
	fs.DurationVar(&f.pingInterval, "ping-interval", 2*time.Millisecond, "PING probe interval (on its own connection)")
	fs.DurationVar(&f.history, "history", 2*time.Minute, "how much time the charts keep")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", 3*time.Second, "how long to wait for a server to answer at start")
	fs.IntVar(&f.writers, "writers", 0, "run W writers per watched server, overwriting random existing keys under the vkwatch: prefix (0: write nothing)")
	fs.IntVar(&f.keys, "keys", 1_000_000, "keyspace the writers overwrite (vkwatch:0 .. vkwatch:N-1; it must exist: see vkwatch load)")
	fs.IntVar(&f.valueSize, "value-size", 300, "bytes per value the writers SET")
	fs.StringVar(&f.record, "record", "", "record every sample and event to FILE (JSON Lines; see --record-format)")
	fs.StringVar(&f.recordFormat, "record-format", "jsonl", "recording format: jsonl or csv")
	fs.StringVar(&f.report, "report", "", "write the save reports to FILE as JSON at exit")
	fs.BoolVar(&f.readOnly, "read-only", false, "send nothing that changes a server: b, a, B, A and --writers are disabled")
}

func (f *monitorFlags) validate() error {
	switch {
	case f.interval < 10*time.Millisecond:
		return usageErr("--interval %s is too short (at least 10ms)", f.interval)
	case f.pingInterval < 100*time.Microsecond:
		return usageErr("--ping-interval %s is too short (at least 100µs)", f.pingInterval)
	case f.history < 10*time.Second:
		return usageErr("--history %s is too short (at least 10s)", f.history)
	case f.connectTimeout <= 0:
		return usageErr("--connect-timeout must be positive")
	case f.writers < 0 || f.keys < 1 || f.valueSize < 1:
		return usageErr("--writers, --keys and --value-size must be positive")
	case f.recordFormat != "jsonl" && f.recordFormat != "csv":
		return usageErr("--record-format %q: want jsonl or csv", f.recordFormat)
	case f.readOnly && f.writers > 0:
		return usageErr("--read-only and --writers contradict each other")
	}
	return nil
}

func (a *app) runMonitor(ctx context.Context, cf *connFlags, mf *monitorFlags, addrs []string) error {
	if err := mf.validate(); err != nil {
		return err
	}
	eps, err := a.endpoints(cf, addrs)
	if err != nil {
		return err
	}
	return a.monitor(ctx, monitorRun{endpoints: eps, flags: mf})
}

// monitorRun is one monitor session: the plain monitor, or the demo's.
type monitorRun struct {
	endpoints []source.Endpoint
	flags     *monitorFlags
	banner    string
	// writers already running (the demo's); nil entries mean none. When
	// nil, --writers decides.
	writers []*load.Writers
}

// monitor connects, runs the UI (or a headless recording without a
// terminal) until the user quits or a signal arrives, and tidies up.
func (a *app) monitor(ctx context.Context, run monitorRun) (err error) {
	mf := run.flags
	headless := !a.isTTY()
	if headless && mf.record == "" {
		return withCode(exitNoTTY, errors.New("standard output is not a terminal: use `vkwatch bench` for a headless experiment, or --record FILE to record samples without the UI"))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	clock := source.NewClock()
	var proc *procmem.Reader
	for _, ep := range run.endpoints {
		if ep.Local() {
			proc, _ = procmem.New() // no /proc: the /proc line shows n/a
			break
		}
	}

	// Connect to every server at once; each gets ConnectTimeout.
	n := len(run.endpoints)
	watchers := make([]*source.Watcher, n)
	idents := make([]*source.Identity, n)
	connErrs := make([]error, n)
	writers := make([]*load.Writers, n)
	copy(writers, run.writers)
	writerPtrs := make([]atomic.Pointer[load.Writers], n)
	var wg sync.WaitGroup
	for i, ep := range run.endpoints {
		cfg := source.WatchConfig{
			Interval:       mf.interval,
			PingInterval:   mf.pingInterval,
			ConnectTimeout: mf.connectTimeout,
		}
		if proc != nil && ep.Local() {
			cfg.Proc = proc.Read
		}
		if (i < len(run.writers) && run.writers[i] != nil) || (run.writers == nil && mf.writers > 0) {
			// Writers start once the server is known to be reachable;
			// until then they have done nothing.
			cfg.WriterOps = func() uint64 {
				if w := writerPtrs[i].Load(); w != nil {
					return w.Ops()
				}
				return 0
			}
		}
		w := source.NewWatcher(ep.Node(), ep, clock, cfg)
		watchers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := w.Connect(ctx)
			if err != nil {
				connErrs[i] = err
				return
			}
			idents[i] = &id
		}()
	}
	wg.Wait()
	defer func() {
		for _, w := range watchers {
			w.Close()
		}
	}()
	reachable := 0
	for i := range connErrs {
		if connErrs[i] == nil {
			reachable++
		}
	}
	if reachable == 0 {
		return withCode(exitConnect, errors.Join(connErrs...))
	}

	// The user's own write load, when asked for: only on reachable servers.
	if run.writers == nil && mf.writers > 0 {
		started, err := startUserWriters(ctx, mf, run.endpoints, connErrs)
		if err != nil {
			return err
		}
		for i, w := range started {
			if w != nil {
				writers[i] = w
				defer w.Stop()
			}
		}
	}
	for i, w := range writers {
		writerPtrs[i].Store(w)
	}

	// Recording.
	var rec *recording
	if mf.record != "" {
		servers := make([]record.ServerInfo, len(run.endpoints))
		for i, ep := range run.endpoints {
			servers[i] = record.ServerInfo{Node: ep.Node(), Addr: ep.String(), Identity: idents[i]}
		}
		rec, err = openRecording(mf.record, mf.recordFormat, clock.Epoch(), mf.settings(), servers)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := rec.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}

	var (
		repMu   sync.Mutex
		reports []source.SaveReport
	)
	if mf.report != "" {
		defer func() {
			repMu.Lock()
			defer repMu.Unlock()
			if werr := writeReports(mf.report, reports); werr != nil && err == nil {
				err = werr
			}
		}()
	}

	batch := newBatcher()
	emit := func(ev source.Event) {
		if rec != nil {
			rec.Write(ev)
		}
		if ev.Kind == source.EventSaveEnded && ev.Report != nil {
			repMu.Lock()
			reports = append(reports, *ev.Report)
			repMu.Unlock()
		}
		batch.add(ev)
	}
	// A server that could not be reached at start shows why in its pane
	// while its watcher keeps trying.
	for i, e := range connErrs {
		if e != nil {
			off, at := clock.Now()
			emit(source.Event{Node: watchers[i].Node(), Kind: source.EventDisconnected, Offset: off, At: at, Err: e.Error()})
		}
	}
	// A panic in a background goroutine would kill the process with the
	// terminal still in raw mode and the alternate screen up. Catch it,
	// end the program through its context (which restores the terminal),
	// and report it as an error.
	var crash crashBox
	var runWG sync.WaitGroup
	for _, w := range watchers {
		runWG.Add(1)
		go func() {
			defer runWG.Done()
			defer crash.recover(cancel)
			w.Run(ctx, emit)
		}()
	}
	defer func() {
		if c := crash.get(); c != nil && err == nil {
			err = c
		}
	}()
	defer runWG.Wait()
	defer cancel()

	if headless {
		fmt.Fprintf(a.stderr, "vkwatch: recording %d server(s) to %s without a terminal; stop with ctrl+c or SIGTERM\n", n, mf.record)
		<-ctx.Done()
		return nil
	}

	nodes := make([]ui.Node, n)
	byNode := make(map[source.NodeID]*source.Watcher, n)
	for i, w := range watchers {
		nodes[i] = ui.Node{ID: w.Node(), Addr: w.Endpoint().String()}
		byNode[w.Node()] = w
	}
	model := ui.New(ui.Config{
		Nodes:    nodes,
		History:  mf.history,
		Interval: mf.interval,
		ReadOnly: mf.readOnly,
		Banner:   run.banner,
		Send: func(node source.NodeID, args ...string) {
			if w := byNode[node]; w != nil {
				w.Do(ctx, args...)
			}
		},
	})
	p := newProgram(ctx, model, a)
	go func() {
		defer crash.recover(cancel)
		batch.pump(ctx, p.Send)
	}()
	_, err = p.Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // a signal: quit like q
	}
	return err
}

// startUserWriters starts --writers on every reachable server (nil where
// a server was not reached). The writers only overwrite existing keys, so
// each server's keyspace is checked first, and unless every one is there
// nothing is started and nothing written: the error says how to preload.
func startUserWriters(ctx context.Context, mf *monitorFlags, eps []source.Endpoint, connErrs []error) ([]*load.Writers, error) {
	cfg := load.Config{Keys: mf.keys, ValueSize: mf.valueSize, Writers: mf.writers}
	opts := make([]*redis.Options, len(eps))
	for i, ep := range eps {
		if connErrs[i] != nil {
			continue
		}
		o, err := ep.RedisOptions()
		if err != nil {
			return nil, withCode(exitConnect, err)
		}
		opts[i] = o
		k, err := load.CheckKeyspace(ctx, o, cfg)
		if err != nil {
			return nil, withCode(exitConnect, fmt.Errorf("%s: %w", ep, err))
		}
		if err := k.Check(ep.String()); err != nil {
			return nil, keyspaceRefusal(err, "monitor")
		}
	}
	started := make([]*load.Writers, len(eps))
	for i, ep := range eps {
		if opts[i] == nil {
			continue
		}
		w, err := load.StartWriters(ctx, opts[i], cfg)
		if err != nil {
			for _, s := range started {
				if s != nil {
					s.Stop()
				}
			}
			return nil, fmt.Errorf("%s: starting writers: %w", ep, err)
		}
		started[i] = w
	}
	return started, nil
}

// newProgram runs m full screen on a's terminal until the user quits or
// ctx ends (a signal, see run), which quits like q: the renderer draws its
// last frame and the input reader is waited for before the terminal is
// given back. Neither bubbletea's WithContext, whose kill path closes the
// input while its reader still uses it (a data race), nor its own signal
// handler, which can block forever sending a QuitMsg that nobody reads once
// the program has ended, is used.
func newProgram(ctx context.Context, m tea.Model, a *app) *tea.Program {
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithInput(a.stdin), tea.WithOutput(a.stdout),
		tea.WithoutSignalHandler(), tea.WithFPS(frameRate))
	go func() {
		<-ctx.Done()
		p.Quit() // returns at once when the program has already ended
	}()
	return p
}

func (f *monitorFlags) settings() map[string]string {
	return map[string]string{
		"interval":      f.interval.String(),
		"ping_interval": f.pingInterval.String(),
		"history":       f.history.String(),
		"writers":       fmt.Sprint(f.writers),
		"keys":          fmt.Sprint(f.keys),
		"value_size":    fmt.Sprint(f.valueSize),
		"read_only":     fmt.Sprint(f.readOnly),
	}
}

func writeReports(path string, reports []source.SaveReport) error {
	b, err := record.MarshalReports(reports)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	return nil
}

// batcher coalesces events so that the UI gets at most one message per
// frame (20 per second) however fast samples and PINGs come: samples never
// queue up behind drawing.
type batcher struct {
	mu     sync.Mutex
	events []source.Event
}

func newBatcher() *batcher { return &batcher{} }

func (b *batcher) add(ev source.Event) {
	b.mu.Lock()
	b.events = append(b.events, ev)
	b.mu.Unlock()
}

func (b *batcher) take() []source.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	evs := b.events
	b.events = nil
	return evs
}

// frameInterval is how often queued events are handed to the UI, and
// frameRate the renderer's matching cap: a human rate, however fast
// samples come.
const (
	frameInterval = 50 * time.Millisecond
	frameRate     = int(time.Second / frameInterval)
)

func (b *batcher) pump(ctx context.Context, send func(tea.Msg)) {
	t := time.NewTicker(frameInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if evs := b.take(); len(evs) > 0 {
				send(ui.EventsMsg(evs))
			}
		}
	}
}

// crashBox keeps the first panic of a background goroutine as an error.
type crashBox struct {
	mu  sync.Mutex
	err error
}

// recover is deferred in a goroutine: it stops the panic, keeps it and
// cancels the run.
func (c *crashBox) recover(cancel context.CancelFunc) {
	if r := recover(); r != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = fmt.Errorf("internal error (please report it): panic: %v\n%s", r, debug.Stack())
		}
		c.mu.Unlock()
		cancel()
	}
}

func (c *crashBox) get() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
