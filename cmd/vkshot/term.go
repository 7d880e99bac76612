package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	screenshot "github.com/vkwatch/vkwatch/ui/shot"
)

// session is a program in a pseudo-terminal whose output feeds a terminal
// emulator that keeps every cell's character and colours, as a person's
// terminal would show them.
type session struct {
	cmd    *exec.Cmd
	ptm    *os.File
	mu     sync.Mutex // guards emu: the output reader writes, snapshots read
	emu    *vt.Emulator
	exited chan struct{}
	state  *os.ProcessState
	out    chan struct{} // closed when the output has been read to its end
}

// start runs argv in a cols x rows pseudo-terminal with TERM=xterm-256color
// and COLORTERM=truecolor, so that it draws in full colour.
func start(argv []string, env []string, cols, rows int) (*session, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(env, "TERM=xterm-256color", "COLORTERM=truecolor")
	ptm, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, fmt.Errorf("start %s in a pseudo-terminal: %w", argv[0], err)
	}
	emu := vt.NewEmulator(cols, rows)
	emu.SetDefaultBackgroundColor(screenshot.DefaultBg)
	emu.SetDefaultForegroundColor(screenshot.DefaultFg)
	s := &session{cmd: cmd, ptm: ptm, emu: emu, exited: make(chan struct{}), out: make(chan struct{})}
	// What the terminal answers (the background colour, the cursor
	// position) goes back to the program as typed input. The emulator
	// writes its answers into a pipe that must be read, or it blocks.
	go io.Copy(ptm, emu)
	go func() {
		defer close(s.out)
		buf := make([]byte, 64<<10)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				s.mu.Lock()
				emu.Write(buf[:n])
				s.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		cmd.Wait()
		s.state = cmd.ProcessState
		close(s.exited)
	}()
	return s, nil
}

// press types keys, as a person at the terminal would.
func (s *session) press(keys string) error {
	_, err := s.ptm.Write([]byte(keys))
	return err
}

// screen is one moment of the terminal (ui/shot draws it).
type screen = screenshot.Screen

// snapshot copies the screen as it is now.
func (s *session) snapshot() screen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return screenshot.ScreenOf(s.emu)
}

// errExited is returned by waitFor when the program ends first.
var errExited = errors.New("the program exited")

// waitFor polls the screen until cond holds and returns that screen. It
// waits for what the screen shows, never for a fixed time; within bounds
// how long.
func (s *session) waitFor(within time.Duration, cond func(screen) bool) (screen, error) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		sc := s.snapshot()
		if cond(sc) {
			return sc, nil
		}
		select {
		case <-s.exited:
			return s.snapshot(), fmt.Errorf("%w (%v)", errExited, s.state)
		case <-deadline.C:
			return sc, fmt.Errorf("not on the screen within %s", within)
		case <-tick.C:
		}
	}
}

// wait waits up to within for the program to exit and returns its exit
// status.
func (s *session) wait(within time.Duration) (int, error) {
	select {
	case <-s.exited:
		return s.state.ExitCode(), nil
	case <-time.After(within):
		return -1, fmt.Errorf("still running after %s", within)
	}
}

// close ends the program if it still runs: SIGTERM first, which vkwatch
// handles like q (the demo shuts its servers down), then SIGKILL.
func (s *session) close() {
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	s.ptm.Close()
	s.mu.Lock()
	s.emu.Close()
	s.mu.Unlock()
}
