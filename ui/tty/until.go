package tty

import (
	"context"
	"errors"
	"io"

	tea "github.com/charmbracelet/bubbletea"
)

// RunUntil runs m full screen, reading keys from in and drawing to out,
// until the user quits or ctx ends (a signal), which quits like q: the
// last frame is drawn and the input reader is waited for before the
// terminal is given back. Neither bubbletea's WithContext, whose kill path
// closes the input while its reader still uses it (a data race), nor its
// own signal handler, which can block forever sending a QuitMsg that
// nobody reads once the program has ended, is used. feed, when not nil,
// is given the program's Send before it runs: how messages from outside
// (a monitor's events) reach m.
func RunUntil(ctx context.Context, in io.Reader, out io.Writer, m tea.Model, feed func(send func(tea.Msg))) error {
	t := New(in, out)
	p := t.Program(m, tea.WithoutSignalHandler())
	go func() {
		<-ctx.Done()
		p.Quit() // returns at once when the program has already ended
	}()
	if feed != nil {
		feed(p.Send)
	}
	_, err := t.Run(p)
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // a signal: quit like q
	}
	return err
}
