package main

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
	"github.com/vkwatch/vkwatch/source/units"
)

// TestBenchMethodsSignalled: bench --methods on a 9.2 stand-in, stopped
// by ctrl+c (SIGINT) or SIGTERM while its forkless save runs: the real
// binary puts the server's own method back before it exits, says so, and
// exits as the README's table says (130; 1).
func TestBenchMethodsSignalled(t *testing.T) {
	for _, tt := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitInterrupted}, {syscall.SIGTERM, exitError}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			s := standin.Start(t, standin.Options{ForklessInfra: true})
			s.Load(load.DefaultPrefix, 2000, 600)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			go s.DriveSaves(ctx)
			h := startHeadless(t, "bench", s.Addr, "--methods", "fork,forkless", "--keys", "2000", "--value-size", "600",
				"--runs", "2", "--window", "3s", "--trigger-at", "500ms", "--writers", "2", "--interval", "100ms")
			s.Wait(t, "the forkless run's save", func(v standin.View) bool { return v.Saving && v.Method == "forkless" })
			if got := s.Setting("bgsave-default-method"); got != "forkless" {
				t.Fatalf("during the forkless run the method is %q", got)
			}
			h.cmd.Process.Signal(tt.sig)
			var err error
			select {
			case err = <-h.done:
				h.ended = true
			case <-time.After(30 * time.Second):
				t.Fatalf("bench did not end within 30s of %s:\n%s", tt.sig, h.stderr.String())
			}
			if code := exitCode(err); code != tt.code {
				t.Errorf("exit status %d after %s, want %d:\n%s", code, tt.sig, tt.code, h.stderr.String())
			}
			if got := s.Setting("bgsave-default-method"); got != "fork" {
				t.Errorf("bgsave-default-method %q after %s, want the server's own fork", got, tt.sig)
			}
			if !strings.Contains(h.stderr.String(), "bgsave-default-method is fork, as before the bench") {
				t.Errorf("stderr does not say the method is back:\n%s", h.stderr.String())
			}
		})
	}
}

// TestBenchMethodsRefusedByRedis: --methods on Redis 7.0.15 is refused
// before any run, with the reason; the server was sent reads only.
func TestBenchMethodsRefusedByRedis(t *testing.T) {
	srv, c := servertest.StartWithClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runVKWatch(t, time.Minute, "bench", srv.Addr, "--methods", "fork,forkless", "--keys", "100")
	want := "vkwatch: " + srv.Addr + ": cannot save both ways: CONFIG GET bgsave-default-method answers no such setting (the server is redis 7.0.15)"
	if code != exitError || !strings.Contains(stderr, want) || !strings.Contains(stderr, "forkless-infrastructure-enabled yes (a restart)") || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d and %q", code, stdout, stderr, exitError, want)
	}
	for line := range strings.Lines(c.Info(ctx, "commandstats").Val()) {
		name, _, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if ok && !strings.HasPrefix(line, "#") && !slices.Contains([]string{"hello", "info", "config|get", "ping", "config|resetstat"}, name) {
			t.Errorf("a refused bench sent %s", name)
		}
	}
	// A usage the flags cannot run is refused before anything is dialled.
	for _, args := range [][]string{{"--methods", "fork,fork"}, {"--methods", "fork,diskless"}, {"--methods", "forkless", "127.0.0.1:1"}} {
		code, _, stderr := runVKWatch(t, time.Minute, append([]string{"bench", srv.Addr}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, "--methods") {
			t.Errorf("bench %q: exit %d, %s", args, code, stderr)
		}
	}
}

// checkBenchVerdict checks the verdict of a real fork-only bench of two
// Redis servers: it compares the servers given, chooses no method, its
// figures are the bench's own, and the page says the same, line for line.
func checkBenchVerdict(t *testing.T, stdout, page string) {
	t.Helper()
	var out struct {
		Servers []struct {
			Addr      string
			WriterOps struct{ Mean float64 } `json:"writer_ops_per_sec"`
		}
		Verdict struct {
			Kind   string
			Choice *string
			Why    string
			Memory []string
			Trade  []string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	v := out.Verdict
	if v.Kind != "servers" || v.Choice != nil || !strings.Contains(v.Why, "Only fork was measured: no choice of method") ||
		!strings.Contains(v.Why, "most writes/s: ") || len(v.Trade) != 2 {
		t.Fatalf("verdict %+v", v)
	}
	for i, s := range out.Servers {
		ops := units.CountFloat(s.WriterOps.Mean) + " writes/s"
		if !strings.HasPrefix(v.Trade[i], s.Addr+": ") || !strings.Contains(v.Trade[i], ops) {
			t.Errorf("trade %q, want %s's %s", v.Trade[i], s.Addr, ops)
		}
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "&#43;", "+")
	for _, line := range append(append(v.Memory, v.Trade...), "none: "+v.Why) {
		if !strings.Contains(text, ">"+html.EscapeString(line)+"</dd>") {
			t.Errorf("the page's verdict lacks %q", line)
		}
	}
}
