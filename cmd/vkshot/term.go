package main

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// Colours of the emulated terminal when a program leaves them at the
// default: a dark theme (Catppuccin Mocha's base and text, as demo.tape
// uses). vkwatch asks for the background (OSC 11) to pick its dark colours.
var (
	defaultBg = color.RGBA{0x1e, 0x1e, 0x2e, 0xff}
	defaultFg = color.RGBA{0xcd, 0xd6, 0xf4, 0xff}
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
	emu.SetDefaultBackgroundColor(defaultBg)
	emu.SetDefaultForegroundColor(defaultFg)
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

// screen is one moment of the terminal: its text, line by line, and its
// cells with their colours.
type screen struct {
	text  string
	cols  int
	rows  int
	cells [][]uv.Cell
}

// snapshot copies the screen as it is now.
func (s *session) snapshot() screen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return screenOf(s.emu)
}

// screenOf copies an emulator's screen.
func screenOf(emu *vt.Emulator) screen {
	w, h := emu.Width(), emu.Height()
	sc := screen{cols: w, rows: h, cells: make([][]uv.Cell, h)}
	lines := make([]string, h)
	for y := range h {
		row := make([]uv.Cell, w)
		var b strings.Builder
		for x := range w {
			if c := emu.CellAt(x, y); c != nil {
				row[x] = *c
			}
			switch {
			case row[x].Content == "" && row[x].Width == 0 && x > 0 && row[x-1].Width > 1:
				// the second half of a wide character
			case row[x].Content == "":
				b.WriteByte(' ')
			default:
				b.WriteString(row[x].Content)
			}
		}
		sc.cells[y] = row
		lines[y] = strings.TrimRight(b.String(), " ")
	}
	sc.text = strings.Join(lines, "\n")
	return sc
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
