//go:build !linux

package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// askPassword prints prompt to w and reads a line from the terminal tty
// without echo. (On Linux echo is turned off before the prompt shows.)
func askPassword(tty *os.File, w io.Writer, prompt string) ([]byte, error) {
	fmt.Fprint(w, prompt)
	return term.ReadPassword(int(tty.Fd()))
}
