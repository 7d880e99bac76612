//go:build !linux && !darwin

package tty

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// AskPassword prints prompt to w and reads a line from the terminal tty
// without echo. (On Linux and macOS echo is turned off before the prompt
// shows, and ctrl+c ends the prompt at once.)
func AskPassword(_ context.Context, tty *os.File, w io.Writer, prompt string) ([]byte, error) {
	fmt.Fprint(w, prompt)
	return term.ReadPassword(int(tty.Fd()))
}
