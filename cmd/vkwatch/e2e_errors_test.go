//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/shard"
)

// unknownHost is a host name no resolver knows. Its first label is longer
// than DNS allows (63 bytes), so Go's resolver answers "no such host", as
// for a name the DNS does not know, without sending a query: the tests
// send nothing beyond loopback.
var unknownHost = strings.Repeat("x", 64) + ".example"

// connectTimeout is the --connect-timeout of the failing runs; each must
// end within it and a margin for starting a (race-instrumented) process
// on a busy machine (8 s was once too short for TestNoTTY at load 30: the
// margin catches a hang, not a slow start).
const (
	connectTimeout = 2 * time.Second
	exitMargin     = 20 * time.Second
)

// TestBadInput runs vkwatch in a terminal on each kind of bad input and
// checks the exit status, that stderr is one line naming the address and
// the cause, that no password shows anywhere, and that it ends within
// the connect timeout.
func TestBadInput(t *testing.T) {
	const secret = "hunter2-not-this-one"
	plain := servertest.StartDefault(t)
	locked := servertest.Start(t, server.Options{Password: "the-real-pass-777"})
	certs := servertest.NewCerts(t)
	tlsSrv := servertest.Start(t, server.Options{TLS: certs.Server(false)})
	expired := servertest.Start(t, server.Options{TLS: certs.Expired()})
	free := servertest.FreePort(t)
	refused := "127.0.0.1:" + strconv.Itoa(free)
	nodes := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badNodes := nodes("bad.txt", "# the fleet\n"+plain.Addr+"\n127.0.0.1:99999\n")
	plainNodes := nodes("plain.txt", plain.Addr+"\n")
	missingNodes := filepath.Join(t.TempDir(), "missing.txt")
	// The share of two that plain's address does not hash to.
	notPlain := fmt.Sprintf("%d/2", 1-shard.Hashmod(plain.Addr, 2))

	tests := []struct {
		name string
		env  []string
		args []string
		code int
		// want are parts of the one stderr line, in order.
		want []string
	}{
		{"unknown host", nil, []string{unknownHost + ":6379"}, exitConnect,
			[]string{"vkwatch: " + unknownHost + ":6379: unknown host"}},
		{"refused port", nil, []string{refused}, exitConnect,
			[]string{"vkwatch: " + refused + ": connection refused"}},
		{"wrong password (WRONGPASS)", []string{"VALKEYCLI_AUTH=" + secret}, []string{locked.Addr}, exitConnect,
			[]string{"vkwatch: " + locked.Addr + ": authentication failed: WRONGPASS"}},
		{"wrong password in REDISCLI_AUTH", []string{"REDISCLI_AUTH=" + secret}, []string{locked.Addr}, exitConnect,
			[]string{"vkwatch: " + locked.Addr + ": authentication failed: WRONGPASS"}},
		{"password missing (NOAUTH)", nil, []string{locked.Addr}, exitConnect,
			[]string{"vkwatch: " + locked.Addr + ": NOAUTH"}},
		// The server reads the ClientHello as the start of an inline
		// command and waits for its end: the handshake times out, unless
		// the hello happens to hold a newline and the server answers.
		{"TLS to a plain port", nil, []string{"--tls", plain.Addr}, exitConnect,
			[]string{"vkwatch: rediss://" + plain.Addr + ": ", "TLS"}},
		{"plain to a TLS port", nil, []string{tlsSrv.Addr}, exitConnect,
			[]string{"vkwatch: " + tlsSrv.Addr + ": ", "plain connection to a TLS port?"}},
		{"untrusted certificate", nil, []string{"rediss://" + tlsSrv.Addr, "--cacert", certs.OtherCA}, exitConnect,
			[]string{"vkwatch: rediss://" + tlsSrv.Addr + ": TLS handshake failed", "unknown authority"}},
		{"certificate of an unknown CA", nil, []string{"--tls", tlsSrv.Addr}, exitConnect,
			[]string{"vkwatch: rediss://" + tlsSrv.Addr + ": TLS handshake failed", "unknown authority"}},
		{"expired certificate", nil, []string{"rediss://" + expired.Addr, "--cacert", certs.CA}, exitConnect,
			[]string{"vkwatch: rediss://" + expired.Addr + ": TLS handshake failed", "expired"}},
		{"malformed address", nil, []string{"127.0.0.1:99999"}, exitUsage,
			[]string{`vkwatch: address "127.0.0.1:99999": bad port "99999"`}},
		{"malformed host", nil, []string{"user@host:6379"}, exitUsage,
			[]string{`vkwatch: address "user@host:6379": bad host`}},
		{"malformed URL", nil, []string{"redis://:" + secret + "@127.0.0.1:1/x"}, exitUsage,
			[]string{`vkwatch: address "redis://:xxxxx@127.0.0.1:1/x": bad database number "x"`}},
		{"unknown scheme", nil, []string{"http://127.0.0.1:1"}, exitUsage,
			[]string{`vkwatch: address "http://127.0.0.1:1": unknown scheme "http"`}},
		{"unknown flag", nil, []string{"--bogus", plain.Addr}, exitUsage,
			[]string{"vkwatch: unknown flag: --bogus", "vkwatch --help"}},
		{"an address twice", nil, []string{plain.Addr, locked.Addr, plain.Addr}, exitUsage,
			[]string{"vkwatch: " + plain.Addr + " is given twice"}},
		{"--cluster and addresses", nil, []string{"--cluster", plain.Addr, locked.Addr}, exitUsage,
			[]string{"vkwatch: --cluster " + plain.Addr + " finds the nodes itself: give no other address"}},
		{"--cluster and -p", nil, []string{"--cluster", plain.Addr, "-p", "7000"}, exitUsage,
			[]string{"vkwatch: --cluster " + plain.Addr + " finds the nodes itself: give no other address, -h, -p, -s or -u (got --port)"}},
		{"--cluster of a plain server", nil, []string{"--cluster", plain.Addr}, exitConnect,
			[]string{"vkwatch: " + plain.Addr + " is not a cluster node (cluster_enabled:0): watch it without --cluster"}},
		{"--cluster of nothing", nil, []string{"--cluster", "127.0.0.1:1"}, exitConnect,
			[]string{"vkwatch: 127.0.0.1:1: connection refused"}},
		{"--nodes with a bad line", nil, []string{"--nodes", badNodes}, exitUsage,
			[]string{"vkwatch: --nodes: " + badNodes + `:3: address "127.0.0.1:99999": bad port "99999"`}},
		{"--nodes of no file", nil, []string{"--nodes", missingNodes}, exitUsage,
			[]string{"vkwatch: --nodes: " + missingNodes + ": no such file or directory"}},
		{"--nodes and --cluster", nil, []string{"--nodes", plainNodes, "--cluster", plain.Addr}, exitUsage,
			[]string{"vkwatch: --nodes and --cluster both name the fleet: give one"}},
		{"--nodes and addresses", nil, []string{"--nodes", plainNodes, locked.Addr}, exitUsage,
			[]string{"vkwatch: --nodes " + plainNodes + " names every server: give no other address"}},
		{"--shard out of range", nil, []string{"--shard", "4/4", plain.Addr}, exitUsage,
			[]string{`vkwatch: --shard: shard "4/4": I counts from 0 and must be below N`}},
		{"--shard keeping no node", nil, []string{"--nodes", plainNodes, "--shard", notPlain}, exitConnect,
			[]string{"vkwatch: --shard " + notPlain + " keeps none of the fleet's nodes: nothing to watch"}},
		{"--max-observer-cost over a core", nil, []string{"--max-observer-cost", "200%", plain.Addr}, exitUsage,
			[]string{`vkwatch: --max-observer-cost "200%": a share is 0 to 100% of a core`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--connect-timeout", connectTimeout.String()}, tt.args...)
			s := startSession(t, childEnv(tt.env...), args...)
			code := s.wait(connectTimeout + exitMargin)
			took := time.Since(s.start)
			lines := s.stderrLines()
			t.Logf("exit %d after %s: %q", code, took.Round(time.Millisecond), lines)
			if code != tt.code {
				t.Errorf("exit status %d, want %d", code, tt.code)
			}
			if len(lines) != 1 {
				t.Fatalf("stderr has %d lines, want 1: %q", len(lines), lines)
			}
			rest := lines[0]
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("stderr %q: no %q (in order)", lines[0], w)
					break
				}
				rest = rest[i+len(w):]
			}
			if out := s.raw.String() + s.stderr.String(); strings.Contains(out, secret) || strings.Contains(out, "the-real-pass") {
				t.Errorf("a password shows in the output: %q", out)
			}
		})
	}
}

// TestPasswordFlagWarns checks that -a prints valkey-cli's warning (and
// only -a or a password in the URL), before the error, which does not show
// the password; with --no-auth-warning, as in valkey-cli, the error alone.
func TestPasswordFlagWarns(t *testing.T) {
	locked := servertest.Start(t, server.Options{Password: "the-real-pass-777"})
	for _, args := range [][]string{
		{"-a", "wrong-pass-123", locked.Addr},
		{"redis://:wrong-pass-123@" + locked.Addr},
		{"--no-auth-warning", "-a", "wrong-pass-123", locked.Addr},
		{"--no-auth-warning", "redis://:wrong-pass-123@" + locked.Addr},
	} {
		s := startSession(t, childEnv(), append([]string{"--connect-timeout", connectTimeout.String()}, args...)...)
		code := s.wait(connectTimeout + exitMargin)
		lines := s.stderrLines()
		if args[0] != "--no-auth-warning" {
			if len(lines) == 0 || lines[0] != passwordWarning {
				t.Errorf("%q: stderr %q, want the warning first", args, lines)
				continue
			}
			lines = lines[1:]
		}
		if code != exitConnect || len(lines) != 1 || !strings.HasPrefix(lines[0], "vkwatch: "+locked.Addr+": authentication failed: WRONGPASS") {
			t.Errorf("%q: exit %d, stderr %q; want %d and the error", args, code, lines, exitConnect)
		}
		if strings.Contains(s.stderr.String()+s.raw.String(), "wrong-pass-123") {
			t.Errorf("%q: the password shows in the output", args)
		}
	}
	// The password from the environment: no warning.
	s := startSession(t, childEnv("VALKEYCLI_AUTH=wrong-pass-123"), "--connect-timeout", connectTimeout.String(), locked.Addr)
	s.wait(connectTimeout + exitMargin)
	if strings.Contains(s.stderr.String(), "Warning") {
		t.Errorf("a warning for a password from the environment: %q", s.stderr.String())
	}
}

// TestTwoServersUnreachable: each server's error is a line of its own.
func TestTwoServersUnreachable(t *testing.T) {
	free := servertest.FreePort(t)
	refused := "127.0.0.1:" + strconv.Itoa(free)
	s := startSession(t, childEnv(), "--connect-timeout", connectTimeout.String(), unknownHost+":7000", refused)
	code := s.wait(connectTimeout + exitMargin)
	lines := s.stderrLines()
	want := []string{"vkwatch: " + unknownHost + ":7000: unknown host", "vkwatch: " + refused + ": connection refused"}
	if code != exitConnect || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, lines, exitConnect, want)
	}
}

// TestNoTTY: with stdout not a terminal, vkwatch says what to use instead,
// in one line, with its own exit status, before connecting to anything.
func TestNoTTY(t *testing.T) {
	free := servertest.FreePort(t)
	cmd := exec.Command(vkwatchBin, "127.0.0.1:"+strconv.Itoa(free))
	cmd.Env = childEnv()
	var stdout, stderr servertest.Output
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cmd.Stdin = devnull
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(exitMargin):
		cmd.Process.Kill()
		t.Fatal("vkwatch without a terminal did not exit")
	}
	msg := strings.TrimRight(stderr.String(), "\n")
	if code := exitCode(werr); code != exitNoTTY {
		t.Errorf("exit status %d, want %d", code, exitNoTTY)
	}
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "vkwatch: standard output is not a terminal") ||
		!strings.Contains(msg, "vkwatch bench") || !strings.Contains(msg, "--record") {
		t.Errorf("stderr %q: want one line suggesting bench or --record", msg)
	}
	if stdout.String() != "" {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}
