//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// runCLI runs the real binary without a terminal (as cron does) and
// returns its exit status, stdout and stderr; it fails the test when the
// run does not end within a minute.
func runCLI(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, vkwatchBin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	t.Logf("vkwatch %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("vkwatch %s did not end within a minute\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), out.String(), errb.String())
	}
	return exitCode(err), out.String(), errb.String()
}

// TestSaveCommand: vkwatch save ADDR on a real server (password from the
// environment) saves it, prints the report and exits 0; on a server
// already saving it exits 1 with the server's own words; the password
// shows nowhere.
func TestSaveCommand(t *testing.T) {
	const pass = "save-secret-4242"
	srv := servertest.Start(t, server.Options{Password: pass})
	c := servertest.Client(t, srv)
	ctx := context.Background()
	servertest.Populate(t, c, 20000, "k", 100)
	rdbSaves := func() string {
		return regexp.MustCompile(`rdb_saves:(\d+)`).FindStringSubmatch(c.Info(ctx, "persistence").Val())[1]
	}
	env := childEnv("VALKEYCLI_AUTH=" + pass)
	report := filepath.Join(t.TempDir(), "saves.json")
	before := rdbSaves()
	code, out, errOut := runCLI(t, env, "save", srv.Addr, "--report", report)
	if code != exitOK || rdbSaves() == before {
		t.Fatalf("exit %d, rdb_saves %s -> %s\nstdout:\n%s\nstderr:\n%s", code, before, rdbSaves(), out, errOut)
	}
	for _, want := range []string{
		"[1/1] " + srv.Addr + " (primary): BGSAVE sent\n      memory check ",
		"[1/1] " + srv.Addr + " (primary): saved in ",
		"last save BGSAVE fork by vkwatch · ok · took ",
		"cow ",
		"\nsaved " + srv.Addr + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var reps []map[string]any
	if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 1 || reps[0]["status"] != "ok" {
		t.Errorf("--report: %v, %v", err, reps)
	}

	// The memory check: after a save with writes during it (a COW to go
	// by), maxmemory just above used_memory leaves no room for another
	// fork: nothing is sent, the warning says why; --force sends it.
	if err := c.ConfigSet(ctx, "rdb-key-save-delay", "20").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress:1"); i = (i + 1) % 20000 {
		c.Set(ctx, "k:"+strconv.Itoa(i), "overwritten during the save, so that it copies pages", 0)
	}
	servertest.WaitFor(t, 10*time.Second, "a save that copied pages", func() bool {
		in := c.Info(ctx, "persistence").Val()
		return strings.Contains(in, "rdb_bgsave_in_progress:0") && !strings.Contains(in, "rdb_last_cow_size:0\r")
	})
	used, err := strconv.ParseInt(regexp.MustCompile(`used_memory:(\d+)`).FindStringSubmatch(c.Info(ctx, "memory").Val())[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+1, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	before = rdbSaves()
	code, out, errOut = runCLI(t, env, "save", srv.Addr)
	heldRE := regexp.MustCompile(`^vkwatch: ` + regexp.QuoteMeta(srv.Addr) + `: a fork save may need \S+ \S+ \(used \S+ \S+ \+ last COW \S+ \S+\) but maxmemory is \S+ \S+; nothing sent to it \(--force sends it anyway\)\n$`)
	if code != exitError || !heldRE.MatchString(errOut) || rdbSaves() != before || strings.Contains(out, "BGSAVE sent") {
		t.Errorf("held: exit %d, rdb_saves %s -> %s, stderr %q\nstdout:\n%s", code, before, rdbSaves(), errOut, out)
	}
	code, out, errOut = runCLI(t, env, "save", srv.Addr, "--force")
	if code != exitOK || rdbSaves() == before || !strings.Contains(out, "memory check would exceed: needs ") {
		t.Errorf("--force: exit %d, rdb_saves %s -> %s\nstdout:\n%s\nstderr:\n%s", code, before, rdbSaves(), out, errOut)
	}
	if err := c.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}

	// A save already running (made slow): BGSAVE is refused, in the
	// server's words, at once rather than after it.
	if err := c.ConfigSet(ctx, "rdb-key-save-delay", "500").Err(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.ConfigSet(ctx, "rdb-key-save-delay", "0")
		c.Do(ctx, "BGSAVE", "CANCEL") // Valkey 8.1+; elsewhere the save just ends
	}()
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, env, "save", srv.Addr)
	want := "vkwatch: BGSAVE on " + srv.Addr + ": ERR Background save already in progress\n"
	if code != exitError || errOut != want {
		t.Errorf("exit %d, stderr %q, want %d, %q\nstdout:\n%s", code, errOut, exitError, want, out)
	}
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, pass) {
			t.Errorf("the password shows: %s", s)
		}
	}
}

// TestSaveRollingCluster: vkwatch save --cluster ADDR --rolling on a real
// 6-node cluster (3 primaries, a replica each) saves one replica per
// shard, one node at a time, with a progress line per node, and exits 0;
// with an ACL user lacking +bgsave on the second node it stops there,
// exits 1 and prints the server's words, the third node never sent.
func TestSaveRollingCluster(t *testing.T) {
	c := servertest.StartCluster(t, 3, 1)
	c.Fill(3000, 100)
	ctx := context.Background()
	// About 1,000 keys a shard at 300 µs: saves of ~0.3 s, long enough
	// to be seen running by the poller.
	c.DoAll("CONFIG", "SET", "rdb-key-save-delay", "300")
	c.DoAll("ACL", "SETUSER", "roller", "on", ">rollpass", "+@all", "~*", "&*")
	env := childEnv("VALKEYCLI_AUTH=rollpass")
	seed := c.Nodes()[0].Addr
	replicas := map[string]bool{}
	for _, r := range c.Replicas() {
		replicas[r.Addr] = true
	}
	saved := func(before map[string]string) map[string]bool {
		out := map[string]bool{}
		for id, v := range c.RDBSaves(t) {
			if before[id] != v {
				out[c.Node(id).Addr] = true
			}
		}
		return out
	}
	lineRE := regexp.MustCompile(`(?m)^\[(\d)/3\] (\S+) \((\w+), shard (\d)\): (.*)$`)

	t.Run("every shard saved", func(t *testing.T) {
		before := c.RDBSaves(t)
		p := c.WatchSaves(t)
		code, out, errOut := runCLI(t, env, "save", "--cluster", seed, "--rolling", "--user", "roller", "--interval", "50ms")
		p.Stop()
		if code != exitOK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		done := map[string]bool{}
		shards := map[string]bool{}
		for _, m := range lineRE.FindAllStringSubmatch(out, -1) {
			if strings.HasPrefix(m[5], "saved in ") {
				done[m[2]] = true
				shards[m[4]] = true
				if m[3] != "replica" || !replicas[m[2]] {
					t.Errorf("%s saved as %s: not a replica", m[2], m[3])
				}
			}
		}
		got := saved(before)
		if len(done) != 3 || len(shards) != 3 || len(got) != 3 {
			t.Errorf("progress says saved %v (shards %v), the servers %v\n%s", done, shards, got, out)
		}
		for addr := range done {
			if !got[addr] || !p.Seen(addr) {
				t.Errorf("%s: said saved, rdb_saves grew %v, seen saving %v", addr, got[addr], p.Seen(addr))
			}
		}
		if n := p.MaxAtOnce(); n != 1 {
			t.Errorf("at most %d nodes saving at once (%v), want 1", n, p.Pairs())
		}
		if !strings.HasSuffix(out, "rolling save done: 3 of 3 nodes saved, one per shard\n") || errOut != "" {
			t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
		}
		if strings.Contains(out+errOut, "rollpass") {
			t.Error("the password shows")
		}
	})

	t.Run("stops at the first refusal", func(t *testing.T) {
		// The roll's order is the shards': refuse on the second shard's replica.
		var second string
		code, out, _ := runCLI(t, env, "save", "--cluster", seed, "--rolling", "--user", "roller", "--interval", "50ms")
		if code != exitOK {
			t.Fatalf("a first roll to learn the order: exit %d", code)
		}
		for _, m := range lineRE.FindAllStringSubmatch(out, -1) {
			if m[1] == "2" {
				second = m[2]
			}
		}
		n := c.Node(nodeIDOf(t, c, second))
		if err := c.Client(n).Do(ctx, "ACL", "SETUSER", "roller", "-bgsave").Err(); err != nil {
			t.Fatal(err)
		}
		defer c.Client(n).Do(ctx, "ACL", "SETUSER", "roller", "+bgsave")
		before := c.RDBSaves(t)
		code, out, errOut := runCLI(t, env, "save", "--cluster", seed, "--rolling", "--user", "roller", "--interval", "50ms")
		if code != exitError || !strings.HasPrefix(errOut, "vkwatch: BGSAVE on "+second+": NOPERM") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("exit %d, stderr %q\nstdout:\n%s", code, errOut, out)
		}
		if got := saved(before); len(got) != 1 || got[second] {
			t.Errorf("saved %v, want the first node only", got)
		}
		if !regexp.MustCompile(`(?m)^\[3/3\] .*: not started$`).MatchString(out) {
			t.Errorf("the third node is not said to be left out:\n%s", out)
		}
	})
}

// nodeIDOf is the cluster node id of the node at addr.
func nodeIDOf(t *testing.T, c *servertest.Cluster, addr string) string {
	t.Helper()
	for _, n := range c.Nodes() {
		if n.Addr == addr {
			return n.ID
		}
	}
	t.Fatalf("no node at %q", addr)
	return ""
}

// TestSaveBarOnTerminal: on a terminal, vkwatch save draws a bar for the
// node saving, in place, and leaves the lines of a plain run once saved.
func TestSaveBarOnTerminal(t *testing.T) {
	// 20,000 keys at 100 µs: a save of about two seconds, seen at several percentages.
	srv, _ := servertest.StartSlowSave(t, 20000, 100, 100)
	s := startSessionSized(t, 24, 80, childEnv(), "save", srv.Addr, "--interval", "50ms")
	bar := regexp.MustCompile(`\[1/1\] ` + regexp.QuoteMeta(srv.Addr) + ` [█░]+ +\d+%`)
	s.waitScreen(20*time.Second, "a progress bar", func(f shot) bool { return bar.MatchString(f.String()) })
	if code := s.wait(30 * time.Second); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, s.stderr.String())
	}
	f := s.scr.snapshot().String()
	if bar.MatchString(f) || !strings.Contains(f, "[1/1] "+srv.Addr+" (primary): saved in ") || !strings.Contains(f, "saved "+srv.Addr) {
		t.Errorf("the bar should give way to the saved lines:\n%s", f)
	}
}
