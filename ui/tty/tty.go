// Package tty draws a bubbletea v1 program on a terminal when its view
// changes, in place of bubbletea's own renderer.
//
// bubbletea v1's renderer keeps a ticker at its frame rate and looks for a
// new view at every tick, whether or not anything changed: twenty wake-ups
// a second for vkwatch, which on an idle server draws once a second. Those
// wake-ups (and the runtime's own that follow them) were a tenth of the
// CPU of vkwatch watching one idle server. bubbletea v1 offers no other
// renderer, only none (tea.WithoutRenderer), and then it leaves the
// terminal alone: no raw mode, no alternate screen, no window size. A
// Terminal does those, and draws each view the program produces as soon
// as it is produced, from a goroutine of its own, with the line-by-line
// update bubbletea's renderer makes on the alternate screen (unchanged
// lines are skipped).
//
// The terminal is given back (modes, cursor, main screen) when the program
// ends, however it ends; a panic in the model's Update or View gives it
// back first, so that bubbletea's report of the panic lands on the main
// screen rather than on the alternate one about to be left.
//
// In raw mode the terminal sends no signal for ctrl+c and ctrl+z: a
// Terminal does what the terminal would. ctrl+c ends the program (Run
// returns tea.ErrInterrupted); ctrl+z gives the terminal back and stops
// the job, and when the shell continues it (fg) takes the terminal again
// and draws the whole view anew, at the window's size then. The model
// sees neither key.
package tty

import (
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
)

// Terminal is one program's terminal. Make it with New, make the program
// with Program and run it with Run, once.
type Terminal struct {
	in  io.Reader
	out io.Writer

	mu      sync.Mutex
	view    string // the latest view, not yet drawn when fresh
	fresh   bool
	width   int // 0 until the size is known
	height  int
	repaint bool // the next view is drawn whole (the size changed)
	wake    chan struct{}

	// Owned by the drawing goroutine.
	lines []string // as drawn last

	// wmu orders the frames and the giving back: no frame is written
	// once the terminal is given back (gone), or while the job is
	// suspended (held).
	wmu     sync.Mutex
	gone    bool
	held    bool
	restore func()

	interrupted atomic.Bool // ctrl+c was pressed
}

// New returns a Terminal reading keys from in and drawing to out (the
// raw mode and the window size need them to be terminals; otherwise the
// program runs without them).
func New(in io.Reader, out io.Writer) *Terminal {
	return &Terminal{in: in, out: out, wake: make(chan struct{}, 1), restore: func() {}}
}

// Program returns a bubbletea program of m drawn by t; opts are added to
// the ones t needs.
func (t *Terminal) Program(m tea.Model, opts ...tea.ProgramOption) *tea.Program {
	opts = append([]tea.ProgramOption{tea.WithoutRenderer(), tea.WithInput(t.in), tea.WithOutput(t.out)}, opts...)
	return tea.NewProgram(model{inner: m, t: t}, opts...)
}

// Run takes the terminal (raw mode, the alternate screen, the cursor
// hidden), runs p, made by Program, until it ends, and gives the terminal
// back.
func (t *Terminal) Run(p *tea.Program) (tea.Model, error) {
	if err := t.take(); err != nil {
		return nil, err
	}
	defer t.giveBack()
	stopSize := t.followSize(p)
	defer stopSize()
	drawn := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(drawn)
		t.draw(stop)
	}()
	m, err := p.Run()
	close(stop)
	<-drawn // the last view drawn before the screen is left
	if w, ok := m.(model); ok {
		m = w.inner
	}
	if err == nil && t.interrupted.Load() {
		err = tea.ErrInterrupted
	}
	return m, err
}

// take puts the input in raw mode, enters the alternate screen and hides
// the cursor.
func (t *Terminal) take() error {
	var undo []func()
	if f, ok := t.in.(term.File); ok && term.IsTerminal(f.Fd()) {
		st, err := term.MakeRaw(f.Fd())
		if err != nil {
			return err
		}
		undo = append(undo, func() { _ = term.Restore(f.Fd(), st) })
	}
	_, _ = io.WriteString(t.out, ansi.SetAltScreenSaveCursorMode+ansi.EraseEntireScreen+ansi.CursorHomePosition+ansi.HideCursor)
	t.restore = func() {
		_, _ = io.WriteString(t.out, ansi.ShowCursor+ansi.ResetAltScreenSaveCursorMode)
		for _, f := range undo {
			f()
		}
	}
	return nil
}

// giveBack shows the cursor, leaves the alternate screen and restores the
// input's mode; only the first call does anything, and no frame is drawn
// after it.
func (t *Terminal) giveBack() {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if !t.gone {
		t.gone = true
		t.restore()
	}
}

// followSize sends p the window's size now and at every SIGWINCH; the
// returned func stops it.
func (t *Terminal) followSize(p *tea.Program) func() {
	f, ok := t.out.(term.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			if w, h, err := term.GetSize(f.Fd()); err == nil {
				p.Send(tea.WindowSizeMsg{Width: w, Height: h}) // returns once p has ended
			}
			select {
			case <-ch:
			case <-done:
				return
			}
		}
	})
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}

// post keeps v as the view to draw and wakes the drawing goroutine; a
// view that comes before the last one was drawn replaces it.
func (t *Terminal) post(v string) {
	t.mu.Lock()
	if v == t.view && !t.repaint {
		t.mu.Unlock()
		return
	}
	t.view, t.fresh = v, true
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// resized notes the window's new size: the next view is drawn whole.
func (t *Terminal) resized(w, h int) {
	t.mu.Lock()
	t.width, t.height, t.repaint = w, h, true
	t.mu.Unlock()
}

// draw writes every fresh view until stop is closed, then the last one.
func (t *Terminal) draw(stop <-chan struct{}) {
	for {
		select {
		case <-t.wake:
			t.drawFresh()
		case <-stop:
			t.drawFresh()
			return
		}
	}
}

// drawFresh draws the latest view if it was not drawn yet.
func (t *Terminal) drawFresh() {
	t.mu.Lock()
	v, fresh, w, h, whole := t.view, t.fresh, t.width, t.height, t.repaint
	t.fresh, t.repaint = false, false
	t.mu.Unlock()
	if !fresh && !whole {
		return
	}
	if whole {
		t.lines = nil
	}
	lines := splitView(v, h)
	if b := frame(t.lines, lines, w, whole); len(b) > 0 {
		t.wmu.Lock()
		if !t.gone && !t.held {
			_, _ = io.WriteString(t.out, b)
		}
		t.wmu.Unlock()
	}
	t.lines = lines
}

// splitView cuts a view into its lines, keeping the last h when there are
// more (h 0: unknown, all).
func splitView(v string, h int) []string {
	lines := strings.Split(v, "\n")
	if h > 0 && len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	return lines
}

// frame is what turns a screen showing prev (nil: unknown) into lines (a
// view's, see splitView) on a terminal w cells wide (0: unknown): as
// bubbletea's renderer does on the alternate screen, from the home
// position, lines that did not change are stepped over, the others
// written, cut to the width and erased to its end; lines left over from
// prev are erased.
func frame(prev, lines []string, w int, whole bool) string {
	var b strings.Builder
	if whole {
		b.WriteString(ansi.EraseEntireScreen)
	}
	b.WriteString(ansi.CursorHomePosition)
	changed := whole
	for i, line := range lines {
		last := i == len(lines)-1
		if i < len(prev) && prev[i] == line {
			if !last {
				b.WriteByte('\n')
			}
			continue
		}
		changed = true
		if w > 0 {
			line = ansi.Truncate(line, w, "")
		}
		b.WriteString(line)
		if ansi.StringWidth(line) < w || w == 0 {
			b.WriteString(ansi.EraseLineRight)
		}
		if !last {
			b.WriteString("\r\n")
		}
	}
	if len(prev) > len(lines) {
		changed = true
		b.WriteString(ansi.EraseScreenBelow)
	}
	if !changed {
		return ""
	}
	b.WriteString(ansi.CursorPosition(0, len(lines)))
	return b.String()
}

// model is the program's model wrapped: its views go to the Terminal.
type model struct {
	inner tea.Model
	t     *Terminal
}

func (m model) Init() tea.Cmd { return m.inner.Init() }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer m.t.onPanic()
	if m.t.interrupted.Load() {
		return m, nil // ending: nothing typed after ctrl+c acts
	}
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch msg.Type {
		case tea.KeyCtrlC:
			m.t.interrupted.Store(true)
			return m, tea.Quit
		case tea.KeyCtrlZ:
			return m, m.t.suspend()
		}
	case tea.WindowSizeMsg:
		m.t.resized(msg.Width, msg.Height)
	}
	var cmd tea.Cmd
	m.inner, cmd = m.inner.Update(msg)
	return m, cmd
}

func (m model) View() string {
	defer m.t.onPanic()
	v := m.inner.View()
	m.t.post(v)
	return v
}

// onPanic, deferred, gives the terminal back before a panic goes on to
// bubbletea, which reports it.
func (t *Terminal) onPanic() {
	if r := recover(); r != nil {
		t.giveBack()
		panic(r)
	}
}

// suspend is ctrl+z: it gives the terminal back, stops the job as the
// terminal's own ctrl+z would (SIGTSTP to the process group, so that the
// shell takes over) and waits to be continued (fg, or SIGCONT); then it
// takes the terminal again, and the command it returns sends the window's
// size, which also draws the next view whole. It runs in Update, as
// bubbletea's own suspend runs in its event loop: nothing is read, updated
// or drawn while the job is stopped.
//
// Where no shell can continue the job (jobControl is false), the kernel
// would discard the stop and vkwatch would wait for ever: ctrl+z does
// nothing there, as in a shell without job control.
func (t *Terminal) suspend() tea.Cmd {
	if !jobControl() {
		return nil
	}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	if !t.hold() {
		return nil
	}
	stopJob()
	<-cont
	if err := t.takeBack(); err != nil {
		return tea.Quit // no terminal to draw on any more
	}
	return t.size
}

// hold gives the terminal back for a while: false if it is gone.
func (t *Terminal) hold() bool {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.gone {
		return false
	}
	t.held = true
	t.restore()
	return true
}

// takeBack takes the terminal again after hold; the next view is drawn
// whole, on a screen the shell has written to meanwhile.
func (t *Terminal) takeBack() error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.held = false
	if t.gone {
		return nil
	}
	t.mu.Lock()
	t.repaint = true
	t.mu.Unlock()
	return t.take()
}

// size is the window's size as a message (nil when out is no terminal).
func (t *Terminal) size() tea.Msg {
	f, ok := t.out.(term.File)
	if !ok {
		return nil
	}
	w, h, err := term.GetSize(f.Fd())
	if err != nil {
		return nil
	}
	return tea.WindowSizeMsg{Width: w, Height: h}
}
