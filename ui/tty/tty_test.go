package tty

import (
	"errors"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestFrame: a frame writes only the lines that changed (the others are
// stepped over with a line feed), cuts them to the width and erases what
// a shorter line leaves; a screen with more lines before has the rest
// erased; a whole frame (after a resize) clears first and writes every
// line; nothing changed, nothing is written.
func TestFrame(t *testing.T) {
	home, el, ed, clear := ansi.CursorHomePosition, ansi.EraseLineRight, ansi.EraseScreenBelow, ansi.EraseEntireScreen
	prev := []string{"title", "alpha", "beta"}
	cases := []struct {
		name  string
		prev  []string
		view  string
		w, h  int
		whole bool
		want  string
	}{
		{"one line changed", prev, "title\nALPHA\nbeta", 10, 5, false,
			home + "\n" + "ALPHA" + el + "\r\n" + ansi.CursorPosition(0, 3)},
		{"unchanged", prev, "title\nalpha\nbeta", 10, 5, false, ""},
		{"fewer lines", prev, "title\nalpha", 10, 5, false,
			home + "\n" + ed + ansi.CursorPosition(0, 2)},
		{"cut to the width", nil, "0123456789abc", 10, 5, false,
			home + "0123456789" + ansi.CursorPosition(0, 1)},
		{"taller than the screen: the last lines", nil, "a\nb\nc", 10, 2, false,
			home + "b" + el + "\r\n" + "c" + el + ansi.CursorPosition(0, 2)},
		{"whole", prev, "title\nalpha\nbeta", 10, 5, true,
			clear + home + "title" + el + "\r\n" + "alpha" + el + "\r\n" + "beta" + el + ansi.CursorPosition(0, 3)},
	}
	for _, c := range cases {
		p := c.prev
		if c.whole {
			p = nil
		}
		if got := frame(p, splitView(c.view, c.h), c.w, c.whole); got != c.want {
			t.Errorf("%s:\n got  %q\n want %q", c.name, got, c.want)
		}
	}
}

// TestPostKeepsTheLatest: views posted faster than they are drawn are
// drawn once, the latest; the same view again is not drawn again, unless
// the window was resized.
func TestPostKeepsTheLatest(t *testing.T) {
	var out strings.Builder
	tm := New(strings.NewReader(""), &out)
	tm.resized(20, 5)
	tm.post("one")
	tm.post("two")
	tm.drawFresh()
	if s := out.String(); strings.Contains(s, "one") || !strings.Contains(s, "two") {
		t.Fatalf("drew %q: want the latest view only", s)
	}
	out.Reset()
	tm.post("two")
	tm.drawFresh()
	if out.Len() != 0 {
		t.Errorf("the same view drawn again: %q", out.String())
	}
	tm.resized(30, 5)
	tm.post("two")
	tm.drawFresh()
	if s := out.String(); !strings.HasPrefix(s, ansi.EraseEntireScreen) || !strings.Contains(s, "two") {
		t.Errorf("after a resize the view must be drawn whole: %q", s)
	}
	tm.giveBack()
	out.Reset()
	tm.post("three")
	tm.drawFresh()
	if out.Len() != 0 {
		t.Errorf("a frame drawn after the terminal was given back: %q", out.String())
	}
}

// TestPanicGivesTheTerminalBack runs a program whose Update panics on a
// real pseudo-terminal: Run returns bubbletea's panic error, and by then
// the terminal's modes are what they were and the output has left the
// alternate screen and shown the cursor again, with no frame after that
// and before bubbletea's report of the panic (which it prints on the
// process's standard output, the terminal here), so that the report stays
// on the main screen.
func TestPanicGivesTheTerminalBack(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptm.Close()
	defer pts.Close()
	if err := pty.Setsize(ptm, &pty.Winsize{Rows: 10, Cols: 40}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(pts.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	read, drawn := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		b := make([]byte, 4096)
		seen := false
		for {
			n, err := ptm.Read(b)
			out.Write(b[:n])
			if !seen && strings.Contains(out.String(), "calm") {
				close(drawn)
				seen = true
			}
			if err != nil {
				return
			}
		}
	}()
	tm := New(pts, pts)
	// No input reader for bubbletea: its panic path closes the reader's
	// file while the reader still reads it (a data race of bubbletea's own,
	// which -race reports). The raw mode is still t's, on pts.
	p := tm.Program(panicky{}, tea.WithoutSignalHandler(), tea.WithInput(nil))
	go func() {
		<-drawn // the first frame on the screen, then the panic
		p.Send(boom{})
	}()
	stdout := os.Stdout
	os.Stdout = pts
	_, err = tm.Run(p)
	os.Stdout = stdout
	if !errors.Is(err, tea.ErrProgramPanic) {
		t.Errorf("Run: %v, want bubbletea's panic error", err)
	}
	after, err := unix.IoctlGetTermios(int(pts.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	const modes = unix.ECHO | unix.ICANON | unix.ISIG
	if after.Lflag&modes != before.Lflag&modes || after.Oflag&unix.OPOST != before.Oflag&unix.OPOST {
		t.Errorf("terminal modes not restored: lflag %#x oflag %#x, were %#x %#x", after.Lflag, after.Oflag, before.Lflag, before.Oflag)
	}
	pts.Close()
	<-read
	s := out.String()
	enter, leave := strings.Index(s, ansi.SetAltScreenSaveCursorMode), strings.LastIndex(s, ansi.ResetAltScreenSaveCursorMode)
	if enter < 0 || leave < enter || strings.LastIndex(s, ansi.ShowCursor) < enter {
		t.Fatalf("the alternate screen was not entered and left, cursor shown: %q", s)
	}
	if !strings.Contains(s[enter:leave], "calm") {
		t.Errorf("the view before the panic was not drawn: %q", s)
	}
	if rest := s[leave:]; strings.Contains(rest, "calm") {
		t.Errorf("a frame drawn after the terminal was given back: %q", rest)
	}
	if report := strings.Index(s, "Caught panic"); report < leave {
		t.Errorf("bubbletea's report of the panic at %d, the alternate screen left at %d: the report is lost", report, leave)
	}
}

type boom struct{}

// panicky draws "calm" and panics on boom.
type panicky struct{}

func (panicky) Init() tea.Cmd { return nil }
func (m panicky) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(boom); ok {
		panic("boom")
	}
	return m, nil
}
func (panicky) View() string { return "calm" }

// TestCtrlCInterrupts: ctrl+c ends the program with tea.ErrInterrupted,
// as the terminal's own ctrl+c would end a program in its modes, and the
// model never sees the key (nor any key after it).
func TestCtrlCInterrupts(t *testing.T) {
	var out strings.Builder
	tm := New(strings.NewReader("a\x03b"), &out)
	keys := &keyLog{}
	p := tm.Program(keys, tea.WithoutSignalHandler())
	m, err := tm.Run(p)
	if !errors.Is(err, tea.ErrInterrupted) {
		t.Fatalf("Run: %v, want tea.ErrInterrupted", err)
	}
	if got := m.(*keyLog).keys; strings.Join(got, " ") != "a" {
		t.Errorf("the model saw %q, want only a", got)
	}
}

// keyLog keeps the keys it is given.
type keyLog struct{ keys []string }

func (k *keyLog) Init() tea.Cmd { return nil }
func (k *keyLog) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if km, ok := msg.(tea.KeyMsg); ok {
		k.keys = append(k.keys, km.String())
	}
	return k, nil
}
func (k *keyLog) View() string { return strings.Join(k.keys, " ") }
