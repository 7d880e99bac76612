package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/prometheus/procfs"
)

// Terminal size every attached tool draws into: the 200x50.
const (
	termCols = 200
	termRows = 50
)

// attached is a program running in a pseudo-terminal of its own, its output
// read as fast as it comes (as a terminal emulator would) and counted.
type attached struct {
	name string
	cmd  *exec.Cmd
	ptmx *os.File

	// onOutput, when not nil, sees every byte drawn.
	onOutput func([]byte)

	bytes  atomic.Int64 // output bytes drawn
	frames atomic.Int64 // full-screen repaints: "ESC [ H" (cursor home), which bubbletea's alt-screen renderer writes once per frame
	done   chan struct{}
	waited chan struct{}
	err    error // the process's exit, valid after waited is closed
	// out is what a program started without a terminal wrote; read it
	// after waited is closed.
	out bytes.Buffer
}

// output is the program's output (without a terminal) once it has ended,
// trimmed.
func (a *attached) output() string {
	<-a.waited
	return strings.TrimSpace(a.out.String())
}

// startInPTY starts argv[0] with args in a new 200x50 pseudo-terminal.
// TERM is xterm-256color, as in an ordinary terminal, so the program draws
// in colour; its queries for the background colour and the cursor position
// are answered as a terminal would answer them.
func startInPTY(name string, argv ...string) (*attached, error) {
	return startInPTYSeen(name, nil, argv...)
}

// startInPTYSeen is startInPTY, showing every byte drawn to seen.
func startInPTYSeen(name string, seen func([]byte), argv ...string) (*attached, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: termRows, Cols: termCols})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a := &attached{name: name, cmd: cmd, ptmx: ptmx, onOutput: seen, done: make(chan struct{}), waited: make(chan struct{})}
	go a.drain()
	go func() {
		a.err = cmd.Wait()
		close(a.waited)
	}()
	return a, nil
}

// Queries a terminal UI may send at start, and what a dark xterm answers.
var termAnswers = []struct{ query, answer string }{
	{"\x1b]11;?\x07", "\x1b]11;rgb:0000/0000/0000\x07"},     // background colour (termenv)
	{"\x1b]11;?\x1b\\", "\x1b]11;rgb:0000/0000/0000\x1b\\"}, // same, ST-terminated
	{"\x1b]10;?\x07", "\x1b]10;rgb:ffff/ffff/ffff\x07"},     // foreground colour
	{"\x1b]10;?\x1b\\", "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"}, //
	{"\x1b[6n", "\x1b[1;1R"},                                // cursor position
	{"\x1b[c", "\x1b[?62;22c"},                              // primary device attributes
}

var frameMark = []byte("\x1b[H")

// drain reads the terminal's output until the program ends, counting bytes
// and frames and answering terminal queries.
func (a *attached) drain() {
	defer close(a.done)
	buf := make([]byte, 64<<10)
	var tail []byte // the last bytes of the previous read: a sequence may straddle two reads
	for {
		n, err := a.ptmx.Read(buf)
		if n > 0 {
			if a.onOutput != nil {
				a.onOutput(buf[:n])
			}
			a.bytes.Add(int64(n))
			chunk := append(tail, buf[:n]...)
			a.frames.Add(int64(bytes.Count(chunk, frameMark) - bytes.Count(tail, frameMark)))
			for _, q := range termAnswers {
				if bytes.Contains(chunk, []byte(q.query)) && !bytes.Contains(tail, []byte(q.query)) {
					a.ptmx.Write([]byte(q.answer))
				}
			}
			keep := min(len(chunk), 8)
			tail = append(tail[:0:0], chunk[len(chunk)-keep:]...)
		}
		if err != nil {
			return
		}
	}
}

// startHeadless starts argv[0] with args with no terminal at all: standard
// input is /dev/null, standard output and error are kept in a.out.
func startHeadless(name string, argv ...string) (*attached, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	a := &attached{name: name, cmd: cmd, done: make(chan struct{}), waited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &a.out, &a.out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	close(a.done)
	go func() {
		a.err = cmd.Wait()
		close(a.waited)
	}()
	return a, nil
}

// pid is the process id of the attached program.
func (a *attached) pid() int { return a.cmd.Process.Pid }

// exited reports whether the program has ended.
func (a *attached) exited() bool {
	select {
	case <-a.waited:
		return true
	default:
		return false
	}
}

// stop asks the program to quit as a user would (q, then ctrl+c for tools
// that only know that), then SIGTERM, then SIGKILL, each with a bounded wait.
func (a *attached) stop() error {
	var steps []func()
	if a.ptmx != nil {
		defer a.ptmx.Close()
		steps = append(steps,
			func() { a.ptmx.Write([]byte("q")) },
			func() { a.ptmx.Write([]byte{3}) }, // ctrl+c through the terminal
		)
	}
	steps = append(steps,
		func() { a.cmd.Process.Signal(syscall.SIGTERM) },
		func() { a.cmd.Process.Kill() },
	)
	for _, step := range steps {
		if a.exited() {
			break
		}
		step()
		select {
		case <-a.waited:
		case <-time.After(3 * time.Second):
		}
	}
	select {
	case <-a.waited:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit", a.name, a.pid())
	}
	// The output may still hold the last frame; the reader ends with the pty.
	return nil
}

// usage is a process's CPU time and resident memory at one moment.
type usage struct {
	at  time.Time
	cpu time.Duration // user + system
	rss int64         // bytes
}

var (
	procOnce sync.Once
	procFS   procfs.FS
	procErr  error
)

// readUsage reads a process's CPU time and RSS. The CPU time is the sum of
// its threads' run time in /proc/<pid>/task/*/schedstat, in nanoseconds;
// /proc/<pid>/stat counts in clock ticks of 10 ms, too coarse for a
// process using 2% of a core for ten seconds (200 ms, give or take 5%).
func readUsage(pid int) (usage, error) {
	procOnce.Do(func() { procFS, procErr = procfs.NewDefaultFS() })
	if procErr != nil {
		return usage{}, procErr
	}
	p, err := procFS.Proc(pid)
	if err != nil {
		return usage{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return usage{}, err
	}
	u := usage{
		at:  time.Now(),
		cpu: time.Duration(st.CPUTime() * float64(time.Second)),
		rss: int64(st.ResidentMemory()),
	}
	if ns, ok := schedRuntime(pid); ok {
		u.cpu = ns
	}
	return u, nil
}

// schedRuntime sums the run time of pid's threads from schedstat (absent
// on kernels without CONFIG_SCHED_INFO).
func schedRuntime(pid int) (time.Duration, bool) {
	dir := filepath.Join(procfs.DefaultMountPoint, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended
		}
		if err != nil {
			return 0, false
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += ns
	}
	return time.Duration(sum), true
}

// cpuShare is the CPU used between two readings as a fraction of one core.
func cpuShare(a, b usage) float64 {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return 0
	}
	return float64(b.cpu-a.cpu) / float64(wall)
}

// waitUntil polls cond every 20 ms until it holds, ctx ends or timeout
// passes.
func waitUntil(ctx context.Context, what string, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not after %s", what, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

var errExited = errors.New("exited")
