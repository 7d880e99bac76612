package main

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

// TestFlagOfAnotherCommand: over the whole command tree, a flag that one
// command lacks and another has is a usage error naming that flag and the
// commands that take it, and no other flag (vkwatch demo --cluster X
// blamed --writers, a flag not given); a connection flag given to a
// command that connects to nothing says so.
func TestFlagOfAnotherCommand(t *testing.T) {
	root := newApp().rootCommand()
	all := map[string]bool{}
	walk(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { all[f.Name] = true })
	})
	flagRe := regexp.MustCompile(`--([a-z][\w-]*)|(?:^|\W)-([a-zA-Z])\b`)
	checked := 0
	walk(root, func(c *cobra.Command) {
		var path []string
		for p := c; p.HasParent(); p = p.Parent() {
			path = append([]string{p.Name()}, path...)
		}
		for name := range all {
			if c.Flags().Lookup(name) != nil || name == "help" || name == "version" {
				continue // cobra adds --help and --version to every command as it runs
			}
			a := newApp()
			var out, errb strings.Builder
			a.stdout, a.stderr = &out, &errb
			args := append(append([]string{}, path...), "--"+name, "x")
			code := a.run(context.Background(), args)
			msg := errb.String()
			if code != exitUsage || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "--"+name) {
				t.Errorf("vkwatch %s: exit %d, %q; want %d and one line naming --%s", strings.Join(args, " "), code, msg, exitUsage, name)
				continue
			}
			for _, m := range flagRe.FindAllStringSubmatch(msg, -1) {
				if m[1] != "" && m[1] != name && m[1] != "help" {
					t.Errorf("vkwatch %s: %q names --%s, a flag not given", strings.Join(args, " "), msg, m[1])
				}
			}
			if !connFlagNames[name] && !strings.Contains(msg, " take") {
				t.Errorf("vkwatch %s: %q does not say which commands take --%s", strings.Join(args, " "), msg, name)
			}
			checked++
		}
	})
	if checked < 100 {
		t.Errorf("only %d cases checked: the tree is not what this test expects", checked)
	}
}
