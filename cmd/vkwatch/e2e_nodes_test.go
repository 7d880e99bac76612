//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// nodesFile writes a nodes file of the servers, with a comment and a
// blank line, and returns its path.
func nodesFile(t *testing.T, srvs []*server.Server) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# the servers under test\n\n")
	for _, s := range srvs {
		b.WriteString(s.Addr + "  # one of them\n")
	}
	path := filepath.Join(t.TempDir(), "nodes.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// save --nodes FILE --rolling saves every server the file names, one at a
// time (one host), and says so; without --rolling, or beside an address,
// it is a usage error and nothing is saved.
func TestSaveRollingNodesFile(t *testing.T) {
	srvs := servertest.StartMany(t, 3, server.Options{Args: []string{"--rdb-key-save-delay", "100"}})
	clients := make([]*redis.Client, len(srvs))
	for i, s := range srvs {
		clients[i] = servertest.Client(t, s)
		servertest.Populate(t, clients[i], 2000, "key", 100)
	}
	saves := func() []int64 {
		out := make([]int64, len(clients))
		for i, c := range clients {
			out[i] = servertest.InfoInt(t, c, "stats", "total_forks")
		}
		return out
	}
	file := nodesFile(t, srvs)
	env := childEnv()
	for _, bad := range [][]string{{"save", "--nodes", file}, {"save", "--nodes", file, "--rolling", srvs[0].Addr}} {
		if code, _, errOut := runCLI(t, env, bad...); code != exitUsage {
			t.Errorf("%q: exit %d (%s), want %d", bad, code, errOut, exitUsage)
		}
	}
	if got := saves(); slices.ContainsFunc(got, func(n int64) bool { return n != 0 }) {
		t.Fatalf("forks after the usage errors: %v", got)
	}
	code, out, errOut := runCLI(t, env, "save", "--nodes", file, "--rolling", "--interval", "50ms")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, s := range srvs {
		if !strings.Contains(out, s.Addr+" (primary, shard ") || !strings.Contains(out, "saved in ") {
			t.Errorf("no progress of %s:\n%s", s.Addr, out)
		}
	}
	if !strings.HasSuffix(out, "rolling save done: 3 of 3 nodes saved, one per shard\n") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if got := saves(); !slices.Equal(got, []int64{1, 1, 1}) {
		t.Errorf("forks of the three servers: %v, want one each", got)
	}
}

// bench --nodes FILE runs on every server the file names, as if each were
// given as ADDR.
func TestBenchNodesFile(t *testing.T) {
	srvs := servertest.StartMany(t, 2, server.Options{Args: []string{"--save", "", "--rdb-key-save-delay", "50"}})
	file := nodesFile(t, srvs)
	code, stdout, stderr := runVKWatch(t, 3*time.Minute, "bench", "--nodes", file, "--preload", "2000", "--keys", "2000",
		"--runs", "1", "--window", "2s", "--trigger-at", "500ms", "--writers", "1", "--json")
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s", code, stderr)
	}
	var bj benchJSON
	if err := json.Unmarshal([]byte(stdout), &bj); err != nil {
		t.Fatalf("bench --json: %v", err)
	}
	var ran []string
	for _, s := range bj.Servers {
		if len(s.Runs) == 1 && s.Runs[0].ServerCOW > 0 {
			ran = append(ran, s.Addr)
		}
	}
	if want := []string{srvs[0].Addr, srvs[1].Addr}; !slices.Equal(ran, want) {
		t.Errorf("bench ran on %v (a run with the server's copy-on-write each), want %v\n%s", ran, want, stdout)
	}
}
