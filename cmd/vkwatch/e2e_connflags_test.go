//go:build linux

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestConnFlags watches real servers named with valkey-cli's flags: -h and
// -p, -p alone, -s on a server listening on a unix socket, -u with a
// database (the sampler's connection is in that database on the server),
// and -p followed by an ADDR for a second server.
func TestConnFlags(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "v.sock")
	a := servertest.Start(t, server.Options{Args: []string{"--unixsocket", sock, "--unixsocketperm", "700"}})
	b := servertest.StartDefault(t)
	port := strconv.Itoa(a.Port)
	admin := servertest.Client(t, a)

	tests := []struct {
		name  string
		args  []string
		panes []string // what each pane's header names, left to right
	}{
		{"-h -p", []string{"-h", "127.0.0.1", "-p", port}, []string{a.Addr}},
		{"-p alone", []string{"-p", port}, []string{a.Addr}},
		{"-s", []string{"-s", sock}, []string{sock}},
		{"-u with a database", []string{"-u", "redis://127.0.0.1:" + port + "/2"}, []string{a.Addr + "/2"}},
		{"-p then an ADDR", []string{"-p", port, b.Addr}, []string{a.Addr, b.Addr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSession(t, childEnv(), tt.args...)
			f := s.waitScreen(15*time.Second, "every pane connected and sampling", func(f shot) bool {
				panes := []string{f.String()}
				if len(tt.panes) == 2 {
					panes = []string{leftPane(f), rightPane(f)}
				}
				for i, p := range panes {
					if !connected(p) || !sampled(p) || !strings.Contains(p, tt.panes[i]) {
						return false
					}
				}
				return true
			})
			if len(tt.panes) == 1 && strings.Contains(f.String(), b.Addr) {
				t.Errorf("one server named, but the screen shows %s too", b.Addr)
			}
			if strings.HasSuffix(tt.panes[0], "/2") {
				list, err := admin.ClientList(context.Background()).Result()
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(list, " db=2 ") {
					t.Errorf("-u .../2: no connection in database 2 on the server:\n%s", list)
				}
			}
			s.quit()
		})
	}
}

// TestConnFlagsBad: a conflict between the flags, a bad port, the same
// server named twice, or connection flags given to a subcommand that
// connects to no server of the user's, is one line on stderr and exit
// status 2, before anything is dialled (the port named is refused, so a
// dial would answer exit 3).
func TestConnFlagsBad(t *testing.T) {
	free := servertest.FreePort(t)
	port := strconv.Itoa(free)
	tests := []struct {
		args []string
		want string // the whole stderr line
	}{
		{[]string{"-p", "99999"}, `vkwatch: -p 99999: bad port "99999" (want 1-65535)`},
		{[]string{"-h", "127.0.0.1", "-p", "x"}, `vkwatch: -h 127.0.0.1 -p x: bad port "x" (want 1-65535)`},
		{[]string{"-h", "user@host"}, `vkwatch: -h user@host: bad host "user@host"`},
		{[]string{"-u", "redis://127.0.0.1:" + port, "-p", port}, "vkwatch: -u names the server with its URI: leave out -h, -p and -s"},
		{[]string{"-s", "/tmp/v.sock", "-h", "127.0.0.1"}, "vkwatch: -s names the server by its unix socket: leave out -h and -p"},
		{[]string{"-u", "127.0.0.1:" + port}, `vkwatch: -u "127.0.0.1:` + port + `": want a URI such as redis://host:port/db (or give the address as an argument)`},
		{[]string{"-u", "redis://:s3cr3t-pw@127.0.0.1:" + port + "/x"}, `vkwatch: -u: address "redis://:xxxxx@127.0.0.1:` + port + `/x": bad database number "x"`},
		{[]string{"-u", "redis://127.0.0.1:" + port, "127.0.0.1:" + port}, `vkwatch: -u 127.0.0.1:` + port + ` and the address "127.0.0.1:` + port + `" name the same server: give it once`},
		{[]string{"-p", port, "127.0.0.1:" + port}, `vkwatch: -p ` + port + ` and the address "127.0.0.1:` + port + `" name the same server: give it once`},
		{[]string{"demo", "--host", "127.0.0.1"}, "vkwatch: demo takes no connection flags (--host): the demo starts its own servers"},
		{[]string{"demo", "-p", port, "-a", "pw"}, "vkwatch: demo takes no connection flags (-p): the demo starts its own servers"},
		{[]string{"replay", "-u", "redis://127.0.0.1:" + port, "x.jsonl"}, "vkwatch: replay takes no connection flags (-u): replay reads a recording and connects to no server"},
		{[]string{"report", "x.jsonl", "-o", "x.html", "--tls"}, "vkwatch: report takes no connection flags (--tls): report reads files and connects to no server"},
		{[]string{"bench", "--runs", "1"}, "vkwatch: bench writes to a server: name it (ADDR, -h HOST -p PORT, -s SOCKET or -u URI)"},
		{[]string{"load"}, "vkwatch: load writes to a server: name it (ADDR, -h HOST -p PORT, -s SOCKET or -u URI)"},
		{[]string{"load", "-p", port, "127.0.0.2:" + port}, "vkwatch: load writes to one server, got 2 (an ADDR and -h, -p, -s or -u)"},
		{[]string{"-h"}, "vkwatch: -h needs a HOST (as in valkey-cli): help is --help"},
		{[]string{"bench", "-h"}, "vkwatch: -h needs a HOST (as in valkey-cli): help is --help"},
	}
	for _, tt := range tests {
		s := startSession(t, childEnv(), tt.args...)
		code := s.wait(exitMargin)
		lines := s.stderrLines()
		if code != exitUsage || len(lines) != 1 || lines[0] != tt.want {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, lines, exitUsage, tt.want)
		}
		if strings.Contains(s.stderr.String()+s.raw.String(), "s3cr3t-pw") {
			t.Errorf("%q: the password shows in the output", tt.args)
		}
	}
}

// TestHelpFlag: --help is help, for the monitor and every subcommand, with
// exit status 0. The commands that connect list valkey-cli's connection
// flags, -h the host; the others list none, and -h is their help too
// (vkwatch report -h was "flag needs an argument: 'h'").
func TestHelpFlag(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"bench", "--help"}, {"load", "--help"}, {"save", "--help"}, {"help"}, {"help", "save"}} {
		out, err := exec.Command(vkwatchBin, args...).CombinedOutput()
		if code := exitCode(err); code != 0 {
			t.Errorf("%q: exit status %d, want 0: %s", args, code, out)
		}
		if !strings.Contains(string(out), "-h, --host string") || !strings.Contains(string(out), "--help") ||
			strings.Contains(string(out), "-h, --help") || !strings.Contains(string(out), "--no-auth-warning") {
			t.Errorf("%q: the help does not list -h as the host and --help as help:\n%s", args, out)
		}
	}
	for _, cmd := range []string{"demo", "replay", "recording", "report", "completion", "metrics"} {
		for _, help := range []string{"-h", "--help"} {
			out, err := exec.Command(vkwatchBin, cmd, help).CombinedOutput()
			if code := exitCode(err); code != 0 {
				t.Errorf("%s %s: exit status %d, want 0: %s", cmd, help, code, out)
			}
			if !strings.Contains(string(out), "-h, --help") || strings.Contains(string(out), "--host") ||
				!strings.Contains(string(out), "Exit status:") {
				t.Errorf("%s %s: want help listing -h, --help, no connection flag, and the exit statuses:\n%s", cmd, help, out)
			}
		}
	}
}
