package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vkwatch/vkwatch/source/live"
)

// Exit statuses: one table for every command, printed by --help (see
// exitTable) and checked command by command by TestExitStatusTable.
const (
	exitOK          = 0   // done, or quit (q; SIGTERM and SIGHUP end a run that goes on until stopped like q)
	exitError       = 1   // the work failed
	exitUsage       = 2   // bad flags, arguments, addresses or input files
	exitConnect     = 3   // no server could be reached
	exitNoTTY       = 4   // standard output is not a terminal and the command needs one
	exitInterrupted = 130 // ctrl+c: 128 + SIGINT, as a shell reports a program it interrupted
)

// exitStatuses are the statuses as --help lists them, in order.
var exitStatuses = []struct {
	code int
	what string
}{
	{exitOK, "done, or stopped as meant: q, or SIGTERM or SIGHUP ending what runs until stopped (the monitor, demo, replay, load's writers)"},
	{exitError, "the work failed: a save failed or was refused, a file could not be written, bench --methods was refused or could not put the method back, or SIGTERM or SIGHUP stopped bench, save or a preload before its end"},
	{exitUsage, "usage: a bad flag, argument or address, an unknown command, or an input file that is not a recording, save reports or bench output, or an output file that exists and is kept"},
	{exitConnect, "connection: no server could be reached (refused, unknown host, authentication, ACL, TLS, timeout)"},
	{exitNoTTY, "standard output is not a terminal and the command needs one (without --record or --metrics)"},
	{exitInterrupted, "ctrl+c, at any moment: at a prompt, in the UI or headless (the terminal restored, recordings kept)"},
}

// exitTable is the table of exit statuses as --help prints it.
func exitTable() string {
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, s := range exitStatuses {
		fmt.Fprintf(&b, "  %-3d  %s\n", s.code, s.what)
	}
	return b.String()
}

// exitErr carries an exit status with an error. Errors from cobra's own
// flag and argument parsing become usage errors.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
}

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitErr{code: code, err: err}
}

// codeOf returns the exit status for err.
func codeOf(err error) int {
	if err == nil {
		return exitOK
	}
	var e *exitErr
	if errors.As(err, &e) {
		return e.code
	}
	var unreachable *live.UnreachableError
	if errors.As(err, &unreachable) {
		return exitConnect
	}
	return exitError
}
