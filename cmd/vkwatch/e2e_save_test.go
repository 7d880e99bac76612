//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/server/standin"
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

// oneDuration: one duration for a save in vkwatch save's output:
// "saved in" is the report's observed duration.
func oneDuration(t *testing.T, out string) {
	t.Helper()
	saved := regexp.MustCompile(`saved in (\S+)\n`).FindStringSubmatch(out)
	observed := regexp.MustCompile(`observed +([≤\d]\S*)`).FindStringSubmatch(out)
	if saved == nil || observed == nil || saved[1] != observed[1] {
		t.Errorf("saved in %v, observed %v: two durations for one save\n%s", saved, observed, out)
	}
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
	// The memory check is said before the BGSAVE it allowed.
	checkThenSent := regexp.MustCompile(`\[1/1\] ` + regexp.QuoteMeta(srv.Addr) + ` \(primary\): memory check [^\n]+\n(      \([^\n]+\)\n)?\[1/1\] ` + regexp.QuoteMeta(srv.Addr) + ` \(primary\): BGSAVE sent\n`)
	if !checkThenSent.MatchString(out) {
		t.Errorf("stdout does not say the memory check, then BGSAVE sent:\n%s", out)
	}
	for _, want := range []string{
		"[1/1] " + srv.Addr + " (primary): saved in ",
		"last save BGSAVE fork by vkwatch · ok",
		"  cow ",
		"\nsaved " + srv.Addr + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	oneDuration(t, out)
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
	heldOut := "[1/1] " + srv.Addr + " (primary): memory check would exceed: needs "
	if code != exitError || !heldRE.MatchString(errOut) || rdbSaves() != before || strings.Contains(out, "BGSAVE sent") ||
		!strings.HasPrefix(out, heldOut) || !strings.HasSuffix(out, "[1/1] "+srv.Addr+" (primary): not started\n") {
		t.Errorf("held: exit %d, rdb_saves %s -> %s, stderr %q\nstdout:\n%s", code, before, rdbSaves(), errOut, out)
	}
	code, out, errOut = runCLI(t, env, "save", srv.Addr, "--force")
	if sent := strings.Index(out, "BGSAVE sent"); code != exitOK || rdbSaves() == before || !strings.HasPrefix(out, heldOut) || sent < 0 {
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

// The real binary against the Valkey 9.2 stand-in (source/server/standin):
// no 9.2 server can be built here. The test moves the stand-in's saves
// one step at a time and waits, for each, until vkwatch shows it.

// lastSaveBlock is the pane's last-save block: its title, from "last
// save", and its rows of fields (six rows in all in a pane this tall).
func lastSaveBlock(f shot) string {
	lines := strings.Split(f.String(), "\n")
	for i, l := range lines {
		if strings.Contains(l, "last save ") && !strings.Contains(l, "none yet") && i+5 < len(lines) {
			return strings.Join(lines[i:i+6], "\n")
		}
	}
	return ""
}

// hasField says whether the screen text s shows a status-block field:
// its label, the padding that aligns its column, its value.
func hasField(s, label, value string) bool {
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(label) + ` +` + regexp.QuoteMeta(value) + `(\s|$)`).MatchString(s)
}

// forkSaveOn runs a fork save on the stand-in through the session's b key,
// with writes during it, to the end, and returns the last-save block.
func forkSaveOn(t *testing.T, s *standin.Server, sess *session) string {
	t.Helper()
	ctx, c := context.Background(), s.Client(t)
	sess.press("b")
	sess.waitScreen(20*time.Second, "the fork save running", func(f shot) bool { return strings.Contains(f.String(), "▶ BGSAVE fork") })
	for i := range 50 {
		if err := c.Set(ctx, "key:"+strconv.Itoa(i), strings.Repeat("w", 600), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	s.Step(s.View().Keys)
	s.Advance(2 * time.Second)
	s.Finish()
	f := sess.waitScreen(20*time.Second, "the fork save's report", func(f shot) bool {
		b := lastSaveBlock(f)
		return strings.Contains(b, "last save BGSAVE fork by vkwatch · ok") && strings.Contains(b, "  cow ") &&
			regexp.MustCompile(`forecast +\d`).MatchString(b)
	})
	s.Advance(time.Second) // the next save begins in a later second
	return lastSaveBlock(f)
}

// metricsBody reads vkwatch's /metrics.
func metricsBody(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b)
}

// TestStandInForklessSession: the story on screen, in --report,
// in /metrics, in the recording's replay and on the report's page. After
// a fork save and the method switched to forkless, a forkless save shows none of the fork's copy-on-write
// (no child), its phases (starting, an ETA, writing the file), the
// writers it blocks, then the next save's forkless side made from it; a
// cancelled and an aborted save are reported as such.
func TestStandInForklessSession(t *testing.T) {
	s := standin.Start(t, standin.Options{ForklessInfra: true})
	s.Load("key:", 4000, 600)
	s.Load("small:", 10, 100)
	dir := t.TempDir()
	rec, rep := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "saves.json")
	maddr := "127.0.0.1:" + strconv.Itoa(servertest.FreePort(t))
	sess := startSessionSized(t, 60, 360, childEnv(), "--record", rec, "--report", rep, "--metrics", maddr, s.Addr)
	sess.waitScreen(20*time.Second, "the stand-in sampled", func(f shot) bool { return sampled(f.String()) })

	fork := forkSaveOn(t, s, sess)
	forkCOW := regexp.MustCompile(`\scow +(\d\S* \S+)`).FindStringSubmatch(fork)
	if forkCOW == nil || forkCOW[1] != "200 KiB" {
		t.Fatalf("the fork save's copy-on-write (rdb_last_cow_size, 50 pages): %q", fork)
	}

	if err := s.Client(t).ConfigSet(context.Background(), "bgsave-default-method", "forkless").Err(); err != nil {
		t.Fatal(err)
	}
	sess.waitScreen(20*time.Second, "the method forkless", func(f shot) bool {
		return strings.Contains(f.String(), "saves forkless") && hasField(f.String(), "forkless", forecast.NoForklessYet)
	})
	block := forklessSaveOn(t, s, sess)
	// Its next forkless save: this one's speed, and its 2 blocked writers.
	sess.waitScreen(20*time.Second, "the next save's forkless side from the save", func(f shot) bool {
		return regexp.MustCompile(`forkless +no cow · ~[0-9.]+m?s \(last forkless save: [0-9,]+ keys/s[^)]*\) · 2 writers blocked`).MatchString(f.String())
	})
	for _, want := range [][2]string{{"took", "3s server"}, {"fork pause", "none (no fork)"}, {"cow", "none (no child)"},
		{"peak used", "+1000 B"}, {"blocked writers", "2"}} {
		if !hasField(block, want[0], want[1]) {
			t.Errorf("the forkless save's last-save block lacks %s %q:\n%s", want[0], want[1], block)
		}
	}
	if strings.Contains(block, forkCOW[1]) {
		t.Errorf("the forkless save shows the fork save's copy-on-write %s:\n%s", forkCOW[1], block)
	}
	checkForklessMetrics(t, maddr)

	sess.press("r")
	sess.waitScreen(10*time.Second, "the reports table: the forkless save, its copy-on-write none and 2 writers blocked", func(f shot) bool {
		return tableSaves(f) == "ok/200 KiB/0 ok/none/2"
	})
	sess.press("r")

	cancelAndAbort(t, s, sess)
	sess.quit()

	checkReportJSON(t, rep)
	checkReplay(t, rec)
	checkPage(t, rec, dir)
}

// forklessSaveOn runs a forkless save on the stand-in through the b key:
// before its first key, with small values cloned and two writers blocked,
// its ETA, its tail, its end; it returns the last-save block.
func forklessSaveOn(t *testing.T, s *standin.Server, sess *session) string {
	t.Helper()
	ctx, c := context.Background(), s.Client(t)
	sess.press("b")
	sess.waitScreen(20*time.Second, "the forkless save before its first key", func(f shot) bool {
		return strings.Contains(f.String(), "▶ BGSAVE forkless") && strings.Contains(f.String(), "starting: before the first key")
	})
	// Small values are cloned (the server's own memory rises), large
	// ones make their writers wait.
	for i := range 10 {
		if err := c.Set(ctx, "small:"+strconv.Itoa(i), strings.Repeat("r", 100), 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	writes := make(chan error, 2)
	for _, k := range []string{"key:3000", "key:3999"} {
		w := s.Client(t)
		go func() { writes <- w.Set(ctx, k, "new", 0).Err() }()
	}
	s.Wait(t, "two writers blocked by the save thread", func(v standin.View) bool { return v.Blocked == 2 })
	s.Step(1000)
	s.Advance(time.Second)
	sess.waitScreen(20*time.Second, "the ETA and the blocked writers", func(f shot) bool {
		return hasField(f.String(), "ETA", "3.0s") && hasField(f.String(), "blocked clients", "2") &&
			hasField(f.String(), "cow", "none (no child)")
	})
	s.Step(3010)
	for range 2 {
		if err := <-writes; err != nil {
			t.Fatal(err)
		}
	}
	sess.waitScreen(20*time.Second, "the tail", func(f shot) bool { return strings.Contains(f.String(), "finishing: writing the file") })
	s.Advance(2 * time.Second)
	s.Finish()
	// The block's three lines as one frame drew them: a snapshot taken
	// while a frame is written may hold the old block's lower lines.
	f := sess.waitScreen(20*time.Second, "the forkless save's report", func(f shot) bool {
		b := lastSaveBlock(f)
		return strings.Contains(b, "last save BGSAVE forkless by vkwatch · ok") && hasField(b, "cow", "none (no child)") &&
			hasField(b, "forecast", "0 B forkless")
	})
	return lastSaveBlock(f)
}

// checkForklessMetrics: /metrics has the forkless save's series (its job
// and method), and they carry none of the fork save's copy-on-write: none
// is 0, or no series.
func checkForklessMetrics(t *testing.T, addr string) {
	t.Helper()
	m := metricsBody(t, addr)
	if !regexp.MustCompile(`(?m)^vkwatch_last_save_duration_seconds\{[^}]*method="forkless"`).MatchString(m) {
		t.Errorf("/metrics has no series of the forkless save:\n%s", m)
	}
	cow := 0
	for _, l := range regexp.MustCompile(`(?m)^vkwatch_last_save_(cow|peak_cow)_bytes\{[^}]*method="forkless"[^}]*\} (\S+)$`).FindAllStringSubmatch(m, -1) {
		if l[2] != "0" {
			t.Errorf("/metrics: %s", l[0])
		}
		if l[1] == "cow" {
			cow++
		}
	}
	if cow != 1 {
		t.Errorf("/metrics: %d vkwatch_last_save_cow_bytes series of the forkless save, want one at 0 (no child)", cow)
	}
}

// cancelAndAbort runs two more forkless saves: one cancelled with x x
// (the answer at once, the save stopping later), one aborted by FLUSHALL.
func cancelAndAbort(t *testing.T, s *standin.Server, sess *session) {
	t.Helper()
	s.Advance(time.Second)
	sess.press("b")
	sess.waitScreen(20*time.Second, "a forkless save", func(f shot) bool { return strings.Contains(f.String(), "▶ BGSAVE forkless") })
	sess.press("x")
	sess.press("x")
	sess.waitScreen(20*time.Second, "the save stopping after BGSAVE CANCEL's answer", func(f shot) bool {
		return strings.Contains(f.String(), "cancelling: BGSAVE CANCEL answered")
	})
	s.Advance(time.Second)
	s.SettleCancel()
	sess.waitScreen(20*time.Second, "the cancelled save", func(f shot) bool {
		return strings.Contains(lastSaveBlock(f), "last save BGSAVE forkless by vkwatch · cancelled") &&
			strings.Contains(f.String(), "ended cancelled: BGSAVE CANCEL answered")
	})

	s.Advance(time.Second)
	sess.press("b")
	sess.waitScreen(20*time.Second, "another forkless save", func(f shot) bool { return strings.Contains(f.String(), "▶ BGSAVE forkless") })
	s.Step(500)
	s.Advance(time.Second)
	s.WaitSampled(t, 1)
	if err := s.Client(t).FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	sess.waitScreen(20*time.Second, "the aborted save", func(f shot) bool {
		return strings.Contains(lastSaveBlock(f), "last save BGSAVE forkless by vkwatch · ✗ aborted") &&
			strings.Contains(f.String(), "ended aborted: rdb_last_save_time not advanced")
	})
}

// savedReport is the part of a --report entry the test checks.
type savedReport struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Evidence      string `json:"evidence"`
	COW           *int64 `json:"cow"`
	COWFrom       string `json:"cow_from"`
	BlockedDuring *int64 `json:"blocked_during"`
}

// checkReportJSON: --report holds the four saves, each with its own
// figures and the evidence of its status.
func checkReportJSON(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reps []savedReport
	if err := json.Unmarshal(b, &reps); err != nil || len(reps) != 4 {
		t.Fatalf("--report: %v, %d reports:\n%s", err, len(reps), b)
	}
	want := []struct {
		kind, status, cowFrom string
		cow                   int64
	}{
		{"BGSAVE fork", "ok", "rdb_last_cow_size", 50 * 4096},
		{"BGSAVE forkless", "ok", string(source.FromNoChild), 0},
		{"BGSAVE forkless", "cancelled", string(source.FromNoChild), 0},
		{"BGSAVE forkless", "aborted", string(source.FromNoChild), 0},
	}
	for i, w := range want {
		r := reps[i]
		if r.Kind != w.kind || r.Status != w.status || r.COWFrom != w.cowFrom || r.COW == nil || *r.COW != w.cow || r.Evidence == "" {
			t.Errorf("--report %d: %+v (cow %v), want %+v", i, r, r.COW, w)
		}
	}
	if b := reps[1].BlockedDuring; b == nil || *b != 2 {
		t.Errorf("--report: the forkless save's blocked_clients during it %v, want 2", b)
	}
}

// checkReplay: the recording replayed shows the same saves, from the same
// samples and answers.
func checkReplay(t *testing.T, rec string) {
	t.Helper()
	p := startSessionSized(t, 60, 360, childEnv(), "replay", rec, "--speed", "16")
	p.waitScreen(60*time.Second, "the aborted save replayed", func(f shot) bool {
		return strings.Contains(lastSaveBlock(f), "last save BGSAVE forkless by vkwatch · ✗ aborted")
	})
	p.press("r")
	p.waitScreen(10*time.Second, "the replay's reports table with the same saves", func(f shot) bool {
		return tableSaves(f) == "ok/200 KiB/0 ok/none/2 cancelled/none/0 ✗ aborted/none/0"
	})
	p.quit()
}

// tableSaves is the reports table's saves as status/cow/blocked, in order.
func tableSaves(f shot) string {
	var out []string
	for _, line := range strings.Split(f.String(), "\n") {
		// A save's first line: started │ kind │ status │ took │ cow │ … │ blocked.
		cells := strings.Split(line, "│")
		if len(cells) < 14 || !slices.Contains([]string{"fork", "forkless"}, strings.TrimSpace(cells[2])) {
			continue
		}
		out = append(out, strings.TrimSpace(cells[3])+"/"+strings.TrimSpace(cells[5])+"/"+strings.TrimSpace(cells[len(cells)-2]))
	}
	return strings.Join(out, " ")
}

// checkPage: vkwatch report's page of the recording shows each save's
// status and, for a forkless one, no copy-on-write.
func checkPage(t *testing.T, rec, dir string) {
	t.Helper()
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := runVKWatch(t, time.Minute, "report", rec, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?s)<tr data-save="\d+">.*?</tr>`).FindAllString(string(b), -1)
	if len(rows) != 4 {
		t.Fatalf("the page shows %d saves, want 4", len(rows))
	}
	for i, want := range []string{">ok<", ">ok<", ">cancelled<", ">aborted<"} {
		if !strings.Contains(rows[i], want) {
			t.Errorf("save %d on the page lacks %s:\n%s", i+1, want, rows[i])
		}
		forkless := strings.Contains(rows[i], "BGSAVE forkless")
		if cow := strings.Contains(rows[i], `data-col="cow" data-v="0">none (no child)<`); cow != forkless {
			t.Errorf("save %d on the page: forkless %v, copy-on-write none %v:\n%s", i+1, forkless, cow, rows[i])
		}
	}
}

// checkStandInBenchJSON checks bench --json of a fork server and a
// forkless one: the seed's figures for both, none of the fork's
// copy-on-write for the forkless run, its blocked writers; it returns
// their mean.
func checkStandInBenchJSON(t *testing.T, stdout string) float64 {
	t.Helper()
	var out struct {
		Servers []struct {
			Runs []struct {
				Kind      string `json:"kind"`
				Status    string `json:"status"`
				COW       *int64 `json:"cow_bytes"`
				COWFrom   string `json:"cow_from"`
				ServerCOW *int64 `json:"server_cow_bytes"`
				Blocked   *int64 `json:"blocked_writers"`
				MemDelta  *int64 `json:"mem_delta_bytes"`
			} `json:"runs"`
			COW     *struct{ Mean float64 } `json:"cow_bytes"`
			Blocked *struct{ Mean float64 } `json:"blocked_writers"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Servers) != 2 {
		t.Fatalf("bench --json: %v\n%s", err, stdout)
	}
	f, fl := out.Servers[0], out.Servers[1]
	fr, flr := f.Runs[0], fl.Runs[0]
	if fr.Kind != "BGSAVE fork" || fr.Status != "ok" || fr.COW == nil || *fr.COW <= 0 || fr.ServerCOW == nil || *fr.ServerCOW != *fr.COW ||
		fr.Blocked == nil || *fr.Blocked != 0 {
		t.Errorf("fork run: %+v", fr)
	}
	if flr.Kind != "BGSAVE forkless" || flr.Status != "ok" || flr.COW == nil || *flr.COW != 0 || flr.COWFrom != string(source.FromNoChild) ||
		flr.ServerCOW == nil || *flr.ServerCOW != 0 || flr.Blocked == nil || *flr.Blocked < 1 || flr.MemDelta == nil {
		t.Errorf("forkless run: %+v (server COW %v, blocked %v)", flr, flr.ServerCOW, flr.Blocked)
	}
	if fl.COW == nil || fl.COW.Mean != 0 || fl.Blocked == nil || fl.Blocked.Mean < 1 {
		t.Errorf("forkless summary: cow %+v, blocked %+v", fl.COW, fl.Blocked)
	}
	return fl.Blocked.Mean
}

// TestStandInBench: bench on a fork server and a forkless one (stand-ins)
// gives the seed's columns for both: the forkless run's copy-on-write is
// none (not the fork save's the server ran before it), its writers
// blocked; bench --json and the report's page say the same.
func TestStandInBench(t *testing.T) {
	const keys = 2000
	fork := standin.Start(t, standin.Options{})
	forkless := standin.Start(t, standin.Options{ForklessInfra: true})
	for _, s := range []*standin.Server{fork, forkless} {
		s.Load(load.DefaultPrefix, keys, 600)
	}
	// A fork save on the forkless server first: rdb_last_cow_size holds
	// its copy-on-write, which the forkless run must not show.
	c := forkless.Client(t)
	ctx := context.Background()
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		c.Set(ctx, load.DefaultPrefix+strconv.Itoa(i), strings.Repeat("x", 600), 0)
	}
	forkless.Step(keys)
	forkless.Advance(time.Second)
	forkless.Finish()
	if err := c.ConfigSet(ctx, "bgsave-default-method", "forkless").Err(); err != nil {
		t.Fatal(err)
	}
	forkless.Advance(time.Second)

	dctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	for _, s := range []*standin.Server{fork, forkless} {
		go func() { done <- s.DriveSaves(dctx) }()
	}
	code, stdout, stderr := runVKWatch(t, 3*time.Minute, "bench", fork.Addr, forkless.Addr, "--keys", strconv.Itoa(keys), "--value-size", "600",
		"--runs", "1", "--window", "3s", "--trigger-at", "1s", "--writers", "2", "--interval", "100ms", "--json")
	stop()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("driving the stand-ins: %v", err)
		}
	}
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, stderr)
	}
	blocked := checkStandInBenchJSON(t, stdout)

	// The report's page of the bench: the seeds' table, for both.
	dir := t.TempDir()
	bj, page := filepath.Join(dir, "bench.json"), filepath.Join(dir, "report.html")
	if err := os.WriteFile(bj, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runVKWatch(t, time.Minute, "report", bj, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(page)
	// The seeds' table: a row per measure, a column per server in the
	// bench's order (the fork stand-in first, the forkless one second).
	cell := func(measure string) string {
		row := regexp.MustCompile(`(?s)<tr data-measure="` + measure + `">.*?</tr>`).FindString(string(b))
		return regexp.MustCompile(`data-col="1" data-v="([^"]*)"`).FindStringSubmatch(row + `data-col="1" data-v="missing"`)[1]
	}
	if got, want := cell("cow"), "0"; got != want {
		t.Errorf("the page's forkless column: copy-on-write %s, want %s (none, no child)", got, want)
	}
	if got, want := cell("blocked"), fmt.Sprint(blocked); got != want {
		t.Errorf("the page's forkless column: writers blocked %s, want %s (the bench's JSON)", got, want)
	}
	for _, s := range []*standin.Server{fork, forkless} {
		if u := s.Unknown(); len(u) > 0 {
			t.Errorf("vkwatch sent the stand-in commands it does not know: %q", u)
		}
	}
}
