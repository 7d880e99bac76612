//go:build linux

package main

// End-to-end tests: the real vkwatch binary, built once by TestMain, runs
// in a pseudo-terminal against real servers that the tests start, and the
// tests read its screen through a small virtual terminal (vt_test.go),
// type keys, send signals and check exit statuses, stderr, files and
// /proc.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// vkwatchBin is the binary under test.
var vkwatchBin string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "vkwatch-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "vkwatch")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		// The binary is held to the same standard as the tests.
		args = append(args, "-race")
	}
	cmd := exec.Command(goTool(), append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building vkwatch for the end-to-end tests:", err)
		return 1
	}
	vkwatchBin = bin
	return m.Run()
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// childEnv is the environment vkwatch runs with: this process's, less any
// password or user the tests do not set themselves, plus extra. Go's own
// resolver is forced so that a name that cannot exist fails without a DNS query
// (see unknownHost): the tests send nothing beyond loopback.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "VALKEYCLI_AUTH", "REDISCLI_AUTH", "VALKEYCLI_USER", "TERM", "NO_COLOR", "GODEBUG":
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"TERM=xterm-256color", "GODEBUG=netdns=go"}, extra...)...)
}

// Terminal size of every session: wide enough for two panes side by side.
const (
	termRows = 60
	termCols = 160
)

// headless is one vkwatch process run without a terminal (stdout is
// /dev/null), its stderr kept. It is killed at the test's end if still
// running.
type headless struct {
	cmd    *exec.Cmd
	stderr servertest.Output
	done   chan error
	ended  bool
}

func startHeadless(t *testing.T, args ...string) *headless {
	t.Helper()
	h := &headless{cmd: exec.Command(vkwatchBin, args...), done: make(chan error, 1)}
	h.cmd.Env = childEnv()
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		if !h.ended {
			h.cmd.Process.Kill()
			<-h.done
		}
	})
	return h
}

// stop sends SIGTERM and fails the test unless the process, the what,
// ends cleanly within exitMargin.
func (h *headless) stop(t *testing.T, what string) {
	t.Helper()
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-h.done:
		h.ended = true
		if err != nil {
			t.Fatalf("%s: %v (%s)", what, err, h.stderr.String())
		}
	case <-time.After(exitMargin):
		t.Fatalf("the %s did not end on SIGTERM", what)
	}
}

// session is one vkwatch process on a pseudo-terminal. Its stdin and
// stdout are the terminal; stderr is kept apart so that a test can check
// what it says.
type session struct {
	t       *testing.T
	cmd     *exec.Cmd
	ptm     *os.File // master side: what vkwatch writes, what the test types
	tty     *os.File // vkwatch's terminal, kept to read its modes after exit
	before  *unix.Termios
	scr     *screen
	raw     servertest.Output // everything vkwatch wrote to the terminal
	stderr  servertest.Output
	exited  chan struct{}
	readEnd chan struct{}
	start   time.Time
	state   *os.ProcessState
	closed  bool
}

// startSession starts vkwatch with args in a new terminal. It is killed,
// if still running, when the test ends.
func startSession(t *testing.T, env []string, args ...string) *session {
	t.Helper()
	return startSessionSized(t, termRows, termCols, env, args...)
}

// startSessionSized is startSession in a terminal of rows x cols.
func startSessionSized(t *testing.T, rows, cols uint16, env []string, args ...string) *session {
	t.Helper()
	// A session of its own with the terminal as its controlling terminal,
	// as a terminal emulator starts a shell, or ssh host vkwatch.
	return startSessionAttr(t, rows, cols, &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}, env, args...)
}

// startSessionAttr is startSessionSized with the process's attributes.
func startSessionAttr(t *testing.T, rows, cols uint16, attr *syscall.SysProcAttr, env []string, args ...string) *session {
	t.Helper()
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{
		t: t, ptm: ptm, tty: tty, before: before, scr: newScreen(int(rows), int(cols)),
		exited: make(chan struct{}), readEnd: make(chan struct{}),
	}
	// Answer the terminal queries a real terminal answers.
	s.scr.reply = func(a string) { ptm.Write([]byte(a)) }
	s.cmd = exec.Command(vkwatchBin, args...)
	s.cmd.Env = env
	s.cmd.Dir = t.TempDir()
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, tty, &s.stderr
	s.cmd.SysProcAttr = attr
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.readEnd)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				s.raw.Write(buf[:n])
				s.scr.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		s.cmd.Wait()
		s.state = s.cmd.ProcessState
		close(s.exited)
	}()
	t.Cleanup(s.cleanup)
	return s
}

func (s *session) cleanup() {
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Kill()
		<-s.exited
	}
	if !s.drainTTY() {
		s.t.Errorf("the terminal's reader did not end")
	}
	s.ptm.Close()
}

// drainTTY closes the terminal's far end and waits up to 10 s for the
// reader to take what vkwatch wrote and end; false if it does not.
func (s *session) drainTTY() bool {
	s.closeTTY()
	select {
	case <-s.readEnd:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

func (s *session) closeTTY() {
	if !s.closed {
		s.closed = true
		s.tty.Close()
	}
}

// pid is vkwatch's process id.
func (s *session) pid() int { return s.cmd.Process.Pid }

// press types keys on the terminal.
func (s *session) press(keys string) {
	s.t.Helper()
	if _, err := s.ptm.Write([]byte(keys)); err != nil {
		s.t.Fatalf("typing %q: %v", keys, err)
	}
}

// waitScreen polls the screen until cond holds, and returns that screen.
// It fails the test, showing the screen and stderr, after within.
func (s *session) waitScreen(within time.Duration, what string, cond func(shot) bool) shot {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		f := s.scr.snapshot()
		if cond(f) {
			return f
		}
		select {
		case <-s.exited:
			s.t.Fatalf("vkwatch exited (%v) while waiting for %s\nscreen:\n%s\nstderr: %s", s.state, what, f, s.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no %s within %s\nscreen:\n%s\nstderr: %s", what, within, f, s.stderr.String())
		}
	}
}

// wait waits for vkwatch to exit, checks that it gave the terminal's
// modes back, reads everything it wrote, and returns its exit status.
func (s *session) wait(within time.Duration) int { return s.end(within, true) }

// waitKilled is wait for a process killed by a signal it cannot catch:
// nothing could restore the terminal.
func (s *session) waitKilled(within time.Duration) int { return s.end(within, false) }

func (s *session) end(within time.Duration, restored bool) int {
	s.t.Helper()
	select {
	case <-s.exited:
	case <-time.After(within):
		// Where is it stuck? A Go program dumps its goroutines on SIGQUIT.
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
		}
		s.t.Fatalf("vkwatch still running after %s\nscreen:\n%s\nstderr: %s", within, s.scr.snapshot(), s.stderr.String())
	}
	// The terminal's modes as vkwatch left them, then the last output.
	after, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
	if err != nil {
		s.t.Fatal(err)
	}
	const modes = unix.ECHO | unix.ICANON | unix.ISIG
	if restored && (after.Lflag&modes != s.before.Lflag&modes || after.Oflag&unix.OPOST != s.before.Oflag&unix.OPOST) {
		s.t.Errorf("terminal modes not restored: lflag %#x oflag %#x, were %#x %#x", after.Lflag, after.Oflag, s.before.Lflag, s.before.Oflag)
	}
	if !s.drainTTY() {
		s.t.Fatal("the terminal's output did not end after vkwatch exited")
	}
	s.scr.flush()
	return s.state.ExitCode()
}

// quit presses q and checks a clean exit: status 0 and the terminal given
// back (the alternate screen left after the last frame).
func (s *session) quit() {
	s.t.Helper()
	s.press("q")
	if code := s.wait(10 * time.Second); code != 0 {
		s.t.Errorf("exit status %d after q, want 0; stderr: %s", code, s.stderr.String())
	}
	s.checkRestored()
}

// checkRestored checks that the output ends by leaving the alternate
// screen, with no frame drawn after it.
func (s *session) checkRestored() {
	s.t.Helper()
	out := s.raw.String()
	enter, leave := strings.LastIndex(out, "\x1b[?1049h"), strings.LastIndex(out, "\x1b[?1049l")
	if enter < 0 || leave < enter {
		s.t.Errorf("the alternate screen was not left (entered at %d, left at %d)", enter, leave)
		return
	}
	if rest := out[leave:]; strings.Contains(rest, "\x1b[H") || strings.Contains(rest, "vkwatch") {
		s.t.Errorf("drawing after leaving the alternate screen: %q", rest)
	}
}

// stderrLines returns stderr's non-empty lines.
func (s *session) stderrLines() []string {
	var lines []string
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// exitCode returns the status of a finished exec.Cmd error.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -2
	}
	return 0
}
