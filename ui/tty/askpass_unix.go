//go:build linux || darwin

package tty

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// AskPassword turns the terminal's echo off, then prints prompt to w, then
// reads a line from the terminal tty and restores its modes. In that
// order, whatever is typed once the prompt shows is never echoed; printing
// the prompt and then calling term.ReadPassword, which turns echo off only
// when it starts, echoes what is typed in between (a quick typist, a
// password manager, a paste).
//
// ctrl+c (SIGINT, which the terminal still sends: ISIG stays on) ends ctx:
// AskPassword then restores the modes and returns at once, so that nothing
// typed afterwards is taken for the password. The read, which a signal
// does not interrupt, is left to end with the process.
func AskPassword(ctx context.Context, tty *os.File, w io.Writer, prompt string) ([]byte, error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("not a terminal: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, err
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, old)
	fmt.Fprint(w, prompt)
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	go func() {
		b, err := readLine(tty)
		got <- line{b, err}
	}()
	select {
	case l := <-got:
		return l.b, l.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// readLine reads up to a newline, one byte at a time so that nothing after
// it is taken from the terminal, and returns the line without it.
func readLine(r io.Reader) ([]byte, error) {
	var line []byte
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		if n == 1 {
			if b[0] == '\n' {
				return line, nil
			}
			line = append(line, b[0])
			continue
		}
		if err == io.EOF && len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
