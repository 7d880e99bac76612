package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestNotACommand: the rule that tells a mistyped subcommand from a
// server, before anything is dialled. A near miss that is a bare word is
// refused; anything a server's address has (a port, a dot, a colon, a
// slash, a scheme), a word far from every subcommand, or a word too short
// to be a typo, is a server.
func TestNotACommand(t *testing.T) {
	root := newApp().rootCommand()
	for _, arg := range []string{"reprot", "bnch", "sav", "replya", "recrding", "rep", "deom", "lod", "completon"} {
		if err := notACommand(root, []string{arg, "x"}); codeOf(err) != exitUsage || !strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%q: %v, want a usage error with a suggestion", arg, err)
		}
	}
	for _, arg := range []string{"save1:6379", "reprot:6379", "10.0.0.1", "cache.internal", "bench.example", "/tmp/report.sock",
		"redis://report", "[::1]:6379", ":7000", "localhost", "redis1", "cache", "valkey-primary", "db", "re"} {
		if err := notACommand(root, []string{arg}); err != nil {
			t.Errorf("%q: %v, want it taken for a server", arg, err)
		}
	}
}

// TestEveryFlagCompletes: every flag of every command completes something
// decided (complete.go), so that a new flag does not fall back to the
// shell's file completion unnoticed.
func TestEveryFlagCompletes(t *testing.T) {
	if left := undecided(newApp().rootCommand()); len(left) > 0 {
		t.Errorf("flags whose completion nobody decided (add them to flagCompletions in complete.go): %s", strings.Join(left, ", "))
	}
}

// TestEnding: the exit status and the error printed, by what ended a run.
func TestEnding(t *testing.T) {
	sig := func(s os.Signal) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&signalled{sig: s})
		return ctx
	}
	canceled := withCode(exitConnect, errors.Join(errors.New("127.0.0.1:6379: connect"), context.Canceled))
	full := errors.New("--record: write: no space left on device")
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		code int
		says string
	}{
		{"done", context.Background(), nil, exitOK, ""},
		{"a failure", context.Background(), full, exitError, full.Error()},
		{"ctrl+c in the UI", context.Background(), tea.ErrInterrupted, exitInterrupted, ""},
		{"ctrl+c while connecting", sig(os.Interrupt), canceled, exitInterrupted, ""},
		{"ctrl+c at the password prompt", sig(os.Interrupt), &signalled{sig: os.Interrupt}, exitInterrupted, ""},
		{"ctrl+c, and the recording could not be flushed", sig(os.Interrupt), full, exitInterrupted, full.Error()},
		{"ctrl+c, headless", sig(os.Interrupt), nil, exitInterrupted, ""},
		{"SIGTERM ends the monitor", sig(syscall.SIGTERM), nil, exitOK, ""},
		{"SIGTERM cuts bench short", sig(syscall.SIGTERM), canceled, exitError, "stopped by SIGTERM before the end"},
		{"SIGHUP cuts a preload short", sig(syscall.SIGHUP), canceled, exitError, "stopped by SIGHUP before the end"},
	} {
		code, err := ending(c.ctx, c.err)
		says := ""
		if err != nil {
			says = err.Error()
		}
		if code != c.code || says != c.says {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, says, c.code, c.says)
		}
	}
}
