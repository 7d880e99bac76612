package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/bench/result"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
	"github.com/vkwatch/vkwatch/source/sourcetest"
	"github.com/vkwatch/vkwatch/source/units"
)

// standInKeys is the dataset of the stand-in benches: values above the
// 512 bytes a forkless save clones, so its writers wait for it.
const standInKeys = 2000

// standInBench starts a Valkey 9.2 stand-in holding the writers' keyspace
// and its save driver (standin.DriveSaves), and a Config of short runs on
// it: the test adds Methods and what it watches.
func standInBench(t *testing.T, opts standin.Options) (*standin.Server, Config) {
	t.Helper()
	s := standin.Start(t, opts)
	s.Load(load.DefaultPrefix, standInKeys, 600)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.DriveSaves(ctx) }()
	t.Cleanup(func() {
		stop()
		<-done
	})
	return s, Config{
		Endpoints: []source.Endpoint{sourcetest.Endpoint(t, s.Addr)},
		Runs:      1, Window: 1500 * time.Millisecond, TriggerAt: 300 * time.Millisecond,
		Writers: 2, Keys: standInKeys, ValueSize: 600, Interval: 50 * time.Millisecond,
	}
}

// TestBenchMethodsAlternate: one stand-in saved both ways, the runs
// alternating (the stand-in's own BGSAVEs say so), a column per method,
// each run's method asked and read back, and the server's own method
// back at the end.
func TestBenchMethodsAlternate(t *testing.T) {
	s, cfg := standInBench(t, standin.Options{ForklessInfra: true})
	var progress progressLog
	cfg.Runs, cfg.Methods, cfg.Progress = 2, []string{"fork", "forkless"}, progress.add
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sums, err := Bench(ctx, cfg)
	if err != nil {
		t.Fatalf("Bench: %v\n%s", err, progress.String())
	}
	if got, want := s.SaveMethods(), []string{"fork", "forkless", "fork", "forkless"}; !slices.Equal(got, want) {
		t.Errorf("the stand-in's saves ran %q, want %q", got, want)
	}
	if len(sums) != 2 || sums[0].Method != "fork" || sums[1].Method != "forkless" {
		t.Fatalf("%d columns: %+v", len(sums), sums)
	}
	for i, want := range [][]int{{1, 3}, {2, 4}} {
		col := sums[i]
		for j, r := range col.Runs {
			if r.N != want[j] || r.Asked != col.Method || r.Report.Kind.Method() != col.Method || r.Forced() {
				t.Errorf("%s run %d: number %d, asked %q, saved %q", col.Method, j, r.N, r.Asked, r.Report.Kind)
			}
			if len(r.Limits) == 0 {
				t.Errorf("%s run %d: no memory limit kept (the stand-in reports total_system_memory)", col.Method, r.N)
			}
		}
	}
	if got := s.Setting("bgsave-default-method"); got != "fork" {
		t.Errorf("bgsave-default-method %q after the bench, want the server's own fork", got)
	}
	if !strings.Contains(progress.String(), "bgsave-default-method is fork, as before the bench") {
		t.Errorf("progress does not say the method is back:\n%s", progress.String())
	}
	// The verdict's numbers are the runs'.
	v := result.Decide(sums)
	if v.Kind != result.Methods || len(v.Trade) != 2 {
		t.Fatalf("verdict %+v", v)
	}
	var peak int64
	for _, r := range sums[0].Runs {
		peak = max(peak, r.MemDelta.V, r.ServerCOW.V)
	}
	fork, fl := sums[0].WriterOps.Mean, sums[1].WriterOps.Mean
	ops := units.CountFloat(fl) + fmt.Sprintf(" writes/s (%+.0f%%)", 100*(fl-fork)/fork)
	if v.Sides[0].Peak.V != peak || !strings.Contains(v.Trade[1], ops) {
		t.Errorf("verdict peak %v, want %d; trade %q, want %q in it", v.Sides[0].Peak, peak, v.Trade, ops)
	}
	if u := s.Unknown(); len(u) > 0 {
		t.Errorf("bench sent the stand-in commands it does not know: %q", u)
	}
}

// TestBenchMethodsForcedFork: a module that cannot save forklessly makes
// the server fork though forkless is set: that run is a fork run, says
// so, and there is no forkless column.
func TestBenchMethodsForcedFork(t *testing.T) {
	_, cfg := standInBench(t, standin.Options{ForklessInfra: true, ModuleForcesFork: true})
	var progress progressLog
	cfg.Methods, cfg.Progress = []string{"fork", "forkless"}, progress.add
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sums, err := Bench(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 1 || sums[0].Method != "fork" || len(sums[0].Runs) != 2 || !sums[0].Runs[1].Forced() {
		t.Fatalf("columns %+v", sums)
	}
	if !strings.Contains(progress.String(), "run 2/2: asked forkless, the server forked (rdb_current_bgsave_type fork") {
		t.Errorf("progress:\n%s", progress.String())
	}
	if v := result.Decide(sums); v.Choice != "" || len(v.Missing) == 0 || !strings.Contains(v.Missing[0], "asked forkless all forked") {
		t.Errorf("verdict %+v", v)
	}
}

// TestBenchMethodsRefusedWithoutInfra: a 9.2 server started without the
// forkless infrastructure refuses forkless; bench says so in its words
// and what it takes, before any run: no BGSAVE, no write, and the
// setting as it was.
func TestBenchMethodsRefusedWithoutInfra(t *testing.T) {
	s, cfg := standInBench(t, standin.Options{})
	cfg.Methods = []string{"fork", "forkless"}
	before := s.View()
	_, err := Bench(context.Background(), cfg)
	for _, want := range []string{s.Addr + ": CONFIG SET bgsave-default-method forkless: ERR CONFIG SET failed (possibly related to argument " +
		"'bgsave-default-method') - 'forkless' can only be selected when the server was started with 'forkless-infrastructure-enabled yes'",
		`forkless-infrastructure-enabled is "no": it takes forkless-infrastructure-enabled yes at startup (a restart)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Bench: %v\nwant it to say %q", err, want)
		}
	}
	if got := s.SaveMethods(); len(got) > 0 || s.View().Dirty != before.Dirty {
		t.Errorf("a refused bench saved %q and wrote %d keys", got, s.View().Dirty-before.Dirty)
	}
	if got := s.Setting("bgsave-default-method"); got != "fork" {
		t.Errorf("bgsave-default-method %q, want fork", got)
	}
}

// TestBenchMethodsRefusedOnRedis: Redis 7 has no bgsave-default-method:
// refused before any run, with what it takes, and nothing sent but reads
// (INFO commandstats).
func TestBenchMethodsRefusedOnRedis(t *testing.T) {
	srv, c := servertest.StartWithClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servertest.Populate(t, c, 1000, "vkwatch:", 30)
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := Bench(ctx, Config{Endpoints: []source.Endpoint{sourcetest.Endpoint(t, srv.Addr)}, Runs: 1, Keys: 1000,
		Window: time.Second, TriggerAt: 100 * time.Millisecond, Methods: []string{"fork", "forkless"}})
	want := srv.Addr + ": cannot save both ways: CONFIG GET bgsave-default-method answers no such setting (the server is redis 7.0.15); " +
		"choosing the method takes Valkey 9.2 or later, started with forkless-infrastructure-enabled yes (a restart)"
	if err == nil || err.Error() != want {
		t.Fatalf("Bench on Redis:\n %v\nwant\n %s", err, want)
	}
	stats := c.Info(ctx, "commandstats").Val()
	for line := range strings.Lines(stats) {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if !slices.Contains([]string{"hello", "info", "config|get", "ping", "config|resetstat"}, name) { // HELLO: the handshake
			t.Errorf("a refused bench sent %s:\n%s", name, stats)
		}
	}
}

// hook calls f once, from Config.Progress, on the first line containing
// text; every line is kept in log.
func hook(log *progressLog, text string, f func()) func(string) {
	var once sync.Once
	return func(m string) {
		log.add(m)
		if strings.Contains(m, text) {
			once.Do(f)
		}
	}
}

// TestBenchMethodsRestoredAfterDrop: every connection dropped while the
// forkless save runs (a proxy or the network cutting them): bench
// reconnects, and the server's method goes back over a new connection.
func TestBenchMethodsRestoredAfterDrop(t *testing.T) {
	s, cfg := standInBench(t, standin.Options{ForklessInfra: true})
	var progress progressLog
	var accepted int
	cfg.Methods = []string{"forkless"}
	cfg.Progress = hook(&progress, "BGSAVE sent", func() {
		s.Wait(t, "the forkless save", func(v standin.View) bool { return v.Saving && v.Method == "forkless" })
		accepted = s.View().Accepted
		s.Drop()
	})
	_, err := Bench(context.Background(), cfg)
	if err != nil && errors.As(err, new(*RestoreError)) {
		t.Fatalf("Bench: %v", err)
	}
	if got := s.Setting("bgsave-default-method"); got != "fork" || s.View().Accepted <= accepted {
		t.Errorf("after the drop: method %q (want fork), %d connections accepted after %d", got, s.View().Accepted, accepted)
	}
	if !strings.Contains(progress.String(), "bgsave-default-method is fork, as before") {
		t.Errorf("progress (bench: %v):\n%s", err, progress.String())
	}
}

// TestBenchMethodsRestoredOnReconnect: the server out of reach when the
// runs end: bench says it will try again, and puts the method back once
// the server is back.
func TestBenchMethodsRestoredOnReconnect(t *testing.T) {
	s, cfg := standInBench(t, standin.Options{ForklessInfra: true})
	var progress progressLog
	cfg.Methods = []string{"forkless"}
	var pauseOnce, resumeOnce sync.Once
	cfg.Progress = func(m string) {
		progress.add(m)
		switch {
		case strings.Contains(m, "run 1/1: dataset"): // the run's result line: the runs are over
			pauseOnce.Do(s.Pause)
		case strings.Contains(m, "could not put bgsave-default-method back to fork yet"):
			resumeOnce.Do(func() { s.Resume(t) })
		}
	}
	sums, err := Bench(context.Background(), cfg)
	if err != nil || len(sums) != 1 {
		t.Fatalf("Bench: %v\n%s", err, progress.String())
	}
	lines := progress.all()
	tried := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "could not put bgsave-default-method back to fork yet")
	})
	back := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "bgsave-default-method is fork, as before") })
	if tried < 0 || back < tried || s.Setting("bgsave-default-method") != "fork" {
		t.Errorf("method %q; progress:\n%s", s.Setting("bgsave-default-method"), progress.String())
	}
}

// TestBenchMethodsNotRestored: the server gone for good: after
// RestoreWithin bench gives up, keeps the runs' results and says the
// command that puts the method back by hand.
func TestBenchMethodsNotRestored(t *testing.T) {
	s, cfg := standInBench(t, standin.Options{ForklessInfra: true})
	var progress progressLog
	cfg.Methods, cfg.RestoreWithin = []string{"forkless"}, 2*time.Second
	var pauseOnce sync.Once
	cfg.Progress = func(m string) {
		progress.add(m)
		if strings.Contains(m, "run 1/1: dataset") {
			pauseOnce.Do(s.Pause)
		}
	}
	sums, err := Bench(context.Background(), cfg)
	var re *RestoreError
	if !errors.As(err, &re) || re.Run != nil || len(sums) != 1 {
		t.Fatalf("Bench: %d columns, %v\n%s", len(sums), err, progress.String())
	}
	_, port, _ := strings.Cut(s.Addr, ":")
	want := s.Addr + ": bgsave-default-method is NOT back to fork ("
	cmd := "put it back by hand: valkey-cli -h 127.0.0.1 -p " + port + " CONFIG SET bgsave-default-method fork"
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), cmd) {
		t.Errorf("error %q\nwant %q ... %q", err, want, cmd)
	}
	if got := s.Setting("bgsave-default-method"); got != "forkless" {
		t.Errorf("the stand-in's method %q: the test meant it left forkless", got)
	}
}

// TestByHand: the command to put a method back names the server as
// valkey-cli does, its user and TLS, never its password, quoted for a
// shell.
func TestByHand(t *testing.T) {
	for _, tt := range []struct {
		ep   source.Endpoint
		want string
	}{
		{source.Endpoint{Network: "tcp", Addr: "[::1]:6380"}, "valkey-cli -h ::1 -p 6380 CONFIG SET bgsave-default-method fork"},
		{source.Endpoint{Network: "unix", Addr: "/run/my valkey.sock"}, "valkey-cli -s '/run/my valkey.sock' CONFIG SET bgsave-default-method fork"},
		{source.Endpoint{Network: "tcp", Addr: "h:1", Username: "o'neil", Password: "secret", TLS: source.TLSOptions{Enabled: true, CACert: "ca.pem"}},
			`valkey-cli -h h -p 1 --tls --cacert ca.pem --user 'o'\''neil' --askpass CONFIG SET bgsave-default-method fork`},
	} {
		if got := byHand(tt.ep, "fork"); got != tt.want || strings.Contains(got, "secret") {
			t.Errorf("byHand(%+v) = %s, want %s", tt.ep, got, tt.want)
		}
	}
}

// TestMethodsConfig: --methods takes fork and forkless, each once, on one
// server alone.
func TestMethodsConfig(t *testing.T) {
	ep := source.Endpoint{Network: "tcp", Addr: "127.0.0.1:1"}
	for name, cfg := range map[string]Config{
		"unknown":  {Endpoints: []source.Endpoint{ep}, Methods: []string{"fork", "diskless"}},
		"twice":    {Endpoints: []source.Endpoint{ep}, Methods: []string{"fork", "fork"}},
		"two":      {Endpoints: []source.Endpoint{ep, ep}, Methods: []string{"fork", "forkless"}},
		"parallel": {Endpoints: []source.Endpoint{ep}, Methods: []string{"forkless"}, Parallel: true},
	} {
		if _, err := Bench(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "--methods") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
