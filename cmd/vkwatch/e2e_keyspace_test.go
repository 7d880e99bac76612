//go:build linux

package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestWritersRefuseMissingKeyspace: against a real server holding the
// user's own 150,000 keys and no vkwatch: keys, bench, the monitor's
// --writers and load --skip-preload refuse in one line that says how to
// preload, with exit status 2, and write nothing: DBSIZE is unchanged and
// the server ran no SET.
func TestWritersRefuseMissingKeyspace(t *testing.T) {
	srv, c := servertest.StartWithClient(t)
	ctx := context.Background()
	servertest.Populate(t, c, 150000, "key", 30)
	const missing = "127.0.0.1:%s: the writers' keyspace vkwatch:0..vkwatch:999999 is not there " +
		"(none of 256 keys sampled across it exists; the writers only overwrite existing keys): "
	port := strconv.Itoa(srv.Port)
	want := strings.ReplaceAll(missing, "%s", port)
	loadCmd := "vkwatch load " + srv.Addr + " --keys 1000000 --writers 0"
	tests := []struct {
		name string
		args []string
		line string
	}{
		{"bench", []string{"bench", "-p", port, "--runs", "2", "--writers", "2"},
			"vkwatch: " + want + "preload it with --preload 1000000, or first with " + loadCmd},
		{"monitor --writers", []string{"-p", port, "--writers", "2"},
			"vkwatch: " + want + "preload it first with " + loadCmd},
		{"load --skip-preload", []string{"load", srv.Addr, "--skip-preload"},
			"vkwatch: " + want + "leave out --skip-preload to preload it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			s := startSession(t, childEnv(), tt.args...)
			code := s.wait(15 * time.Second)
			lines := s.stderrLines()
			if code != exitUsage || len(lines) != 1 || lines[0] != tt.line {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, lines, exitUsage, tt.line)
			}
			if n := c.DBSize(ctx).Val(); n != 150000 {
				t.Errorf("DBSIZE %d after the refusal, want the 150000 keys there were", n)
			}
			if stats := c.Info(ctx, "commandstats").Val(); strings.Contains(stats, "cmdstat_set:") {
				t.Errorf("the server ran SET:\n%s", stats)
			}
		})
	}
}
