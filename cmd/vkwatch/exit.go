package main

import (
	"errors"
	"fmt"
)

// Exit statuses, documented in the README.
const (
	exitOK      = 0 // quit normally
	exitError   = 1 // anything else that went wrong at run time
	exitUsage   = 2 // bad flags, arguments or addresses
	exitConnect = 3 // no watched server could be reached (refused, unknown host, auth, TLS, timeout)
	exitNoTTY   = 4 // standard output is not a terminal and no headless mode was asked for
)

// exitErr carries an exit status with an error. Errors from cobra's own
// flag parsing become usage errors.
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
	return exitError
}
