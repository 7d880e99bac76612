package server_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// ping sends an inline PING and returns the first reply line.
func ping(t *testing.T, addr string, auth string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if auth != "" {
		c.Write([]byte("AUTH " + auth + "\r\n"))
	}
	c.Write([]byte("PING\r\n"))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if auth != "" {
		line, _ = r.ReadString('\n')
	}
	return strings.TrimSpace(line)
}

func TestStartStopLeavesNothing(t *testing.T) {
	s, err := server.Start(context.Background(), server.Options{})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if got := ping(t, s.Addr, ""); got != "+PONG" {
		t.Fatalf("PING answered %q", got)
	}
	pid, dir := s.PID(), s.Dir
	if err := s.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("server process %d still exists after Stop", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s still exists after Stop (err=%v)", dir, err)
	}
}

func TestPasswordNotInArgv(t *testing.T) {
	s := servertest.Start(t, server.Options{Password: "s3cret-xyz"})
	cmdline, err := os.ReadFile("/proc/" + itoa(s.PID()) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), "s3cret-xyz") {
		t.Fatalf("password visible in the server's argv: %q", cmdline)
	}
	if got := ping(t, s.Addr, ""); !strings.HasPrefix(got, "-NOAUTH") {
		t.Fatalf("PING without auth answered %q, want NOAUTH", got)
	}
	if got := ping(t, s.Addr, "s3cret-xyz"); got != "+PONG" {
		t.Fatalf("PING with auth answered %q", got)
	}
}

func TestKillRestartSamePort(t *testing.T) {
	s := servertest.StartDefault(t)
	port := s.Port
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		t.Fatal("killed server still accepts connections")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if s.Port != port {
		t.Fatalf("restarted on port %d, want %d", s.Port, port)
	}
	if got := ping(t, s.Addr, ""); got != "+PONG" {
		t.Fatalf("PING after restart answered %q", got)
	}
}

func TestBadArgsFailWithLog(t *testing.T) {
	_, err := server.Start(context.Background(), server.Options{Args: []string{"--no-such-option", "1"}})
	if err == nil {
		t.Fatal("server started with an unknown option")
	}
	// The whole complaint, to its last line: the demo tells a server
	// without forkless save by it ("Bad directive"), and a server exits at
	// once after writing it, before its log may have been read.
	if !strings.Contains(err.Error(), "no-such-option") || !strings.Contains(err.Error(), "Bad directive") {
		t.Fatalf("error does not show the server's complaint whole: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
