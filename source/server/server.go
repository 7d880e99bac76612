// Package server starts and stops throwaway valkey-server / redis-server
// processes on free loopback ports, each in a directory of its own. The demo
// runs on them and every test that claims behaviour against a server uses them.
//
// A started server is a child of this process and dies with it (Linux
// Pdeathsig), so a crash of vkwatch or of a test leaves no server behind.
package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Binaries are the server programs looked for on PATH, in order of preference.
var Binaries = []string{"valkey-server", "redis-server"}

// ErrNoBinary is returned by Find when no server program is on PATH.
var ErrNoBinary = errors.New("no valkey-server or redis-server on PATH; install one: " +
	"apt-get install redis-server (Debian/Ubuntu), brew install valkey (macOS), " +
	"or run Docker's valkey/valkey image and point vkwatch at it")

// Find returns the path of the server binary to use: preferred when not
// empty (a name on PATH or a path), else the first of Binaries on PATH.
func Find(preferred string) (string, error) {
	if preferred != "" {
		p, err := exec.LookPath(preferred)
		if err != nil {
			return "", fmt.Errorf("server binary %q: %w", preferred, err)
		}
		return p, nil
	}
	for _, b := range Binaries {
		if p, err := exec.LookPath(b); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBinary
}

// Options says how to start a server. Zero values are sensible defaults.
type Options struct {
	Bin  string   // server binary; empty: Find("")
	Dir  string   // working directory; empty: a new temporary directory, removed by Stop
	Port int      // 0: a free loopback port
	Args []string // extra configuration, e.g. {"--enable-debug-command", "yes"}
	// Password sets requirepass.
	Password string
	// TLS, when set, makes the server listen with TLS on Port (and on no
	// plain port).
	TLS *TLSFiles
	// StartTimeout bounds how long Start waits for "Ready to accept
	// connections"; default 10s.
	StartTimeout time.Duration
	// Log receives the server's own log lines, when set.
	Log io.Writer
}

// TLSFiles are the PEM files a TLS server is started with.
type TLSFiles struct {
	Cert, Key, CACert string
	// AuthClients requires client certificates ("yes"); default "no".
	AuthClients bool
}

// Server is a running server process started by Start.
type Server struct {
	Bin  string
	Dir  string
	Port int
	Addr string // 127.0.0.1:Port

	opts    Options
	ownDir  bool
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	logTail *tailBuffer
}

// Start launches a server and returns once it accepts connections. On any
// failure nothing is left behind: no process, no temporary directory.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Bin == "" {
		bin, err := Find("")
		if err != nil {
			return nil, err
		}
		opts.Bin = bin
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	s := &Server{Bin: opts.Bin, opts: opts}
	if opts.Dir == "" {
		dir, err := os.MkdirTemp("", "vkwatch-server-")
		if err != nil {
			return nil, err
		}
		s.Dir, s.ownDir = dir, true
	} else {
		s.Dir = opts.Dir
	}
	// A free port can be taken by someone else between our probe and the
	// server's bind; try a few.
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		port := opts.Port
		if port == 0 {
			port, err = FreePort()
			if err != nil {
				break
			}
		}
		s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		err = s.launch(ctx)
		if err == nil {
			return s, nil
		}
		if opts.Port != 0 || !strings.Contains(err.Error(), "ddress already in use") {
			break
		}
	}
	if s.ownDir {
		os.RemoveAll(s.Dir)
	}
	return nil, err
}

// FreePort asks the kernel for a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) args() []string {
	a := []string{
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.Dir,
		"--daemonize", "no",
		"--logfile", "",
		"--protected-mode", "no",
	}
	if s.opts.TLS != nil {
		auth := "no"
		if s.opts.TLS.AuthClients {
			auth = "yes"
		}
		a = append(a, "--port", "0", "--tls-port", strconv.Itoa(s.Port),
			"--tls-cert-file", s.opts.TLS.Cert, "--tls-key-file", s.opts.TLS.Key,
			"--tls-ca-cert-file", s.opts.TLS.CACert, "--tls-auth-clients", auth)
	} else {
		a = append(a, "--port", strconv.Itoa(s.Port))
	}
	if s.opts.Password != "" {
		// Passed on stdin, not argv, so that it never shows in ps.
		a = append([]string{"-"}, a...)
	}
	return append(a, s.opts.Args...)
}

func (s *Server) launch(ctx context.Context) error {
	cmd := exec.Command(s.Bin, s.args()...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = sysProcAttr()
	if s.opts.Password != "" {
		cmd.Stdin = strings.NewReader("requirepass " + quoteConf(s.opts.Password) + "\n")
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.Bin, err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.exited = make(chan struct{})
	s.logTail = &tailBuffer{max: 20}
	exited, tail := s.exited, s.logTail
	s.mu.Unlock()

	ready := make(chan struct{})
	// drained is closed once every line the process wrote is in tail: a
	// server that exits at once (a bad directive) must be quoted whole,
	// not as far as the scanner had got when the exit was seen.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			tail.add(line)
			if s.opts.Log != nil {
				fmt.Fprintln(s.opts.Log, line)
			}
			if !signalled && strings.Contains(line, "eady to accept connections") {
				close(ready)
				signalled = true
			}
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		err := cmd.Wait()
		pw.Close()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(exited)
	}()

	timer := time.NewTimer(s.opts.StartTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		return nil
	case <-exited:
		<-drained // the pipe's writer is closed once the process is waited for
		return fmt.Errorf("%s exited during start: %s", filepath.Base(s.Bin), tail.String())
	case <-timer.C:
		s.kill()
		return fmt.Errorf("%s did not become ready within %s: %s", filepath.Base(s.Bin), s.opts.StartTimeout, tail.String())
	case <-ctx.Done():
		s.kill()
		return ctx.Err()
	}
}

// Password is the requirepass the server was started with ("" for none).
func (s *Server) Password() string { return s.opts.Password }

// PID returns the server's process id.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Exited is closed when the current server process has exited.
func (s *Server) Exited() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

// Log returns the last lines the server logged.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logTail.String()
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New("server not running")
	}
	return cmd.Process.Signal(sig)
}

func (s *Server) kill() {
	s.signal(syscall.SIGCONT) // a frozen server cannot die of SIGKILL any later, but be tidy
	s.signal(syscall.SIGKILL)
	<-s.Exited()
}

// Kill sends SIGKILL and waits for the process to end. The directory stays,
// so Restart can bring the server back on the same port.
func (s *Server) Kill() error {
	select {
	case <-s.Exited():
		return errors.New("server already exited")
	default:
	}
	s.kill()
	return nil
}

// Freeze stops the process (SIGSTOP): it keeps its sockets but answers nothing.
func (s *Server) Freeze() error { return s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen process (SIGCONT).
func (s *Server) Thaw() error { return s.signal(syscall.SIGCONT) }

// Restart starts the server again on the same port and directory after
// Kill (or after it died).
func (s *Server) Restart(ctx context.Context) error {
	select {
	case <-s.Exited():
	default:
		return errors.New("server still running")
	}
	return s.launch(ctx)
}

// Stop ends the server (SIGTERM, then SIGKILL after 5 s), waits for it and
// removes its temporary directory. It is safe to call more than once.
func (s *Server) Stop() error {
	select {
	case <-s.Exited():
	default:
		s.signal(syscall.SIGCONT)
		s.signal(syscall.SIGTERM)
		t := time.NewTimer(5 * time.Second)
		select {
		case <-s.Exited():
		case <-t.C:
			s.kill()
		}
		t.Stop()
	}
	if s.ownDir {
		return os.RemoveAll(s.Dir)
	}
	return nil
}

// quoteConf quotes a value for a redis.conf line.
func quoteConf(v string) string {
	return strconv.Quote(v)
}

// tailBuffer keeps the last lines of a log.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tailBuffer) add(l string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, l)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tailBuffer) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
