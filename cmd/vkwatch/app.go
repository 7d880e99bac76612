package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// version is set at build time with -ldflags "-X main.version=..."; when it
// is not, the module version from the build info is used.
var version = ""

func vkwatchVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// app holds the process's outside world so that tests can replace it.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// isTTY reports whether stdout is a terminal.
	isTTY func() bool
	// readPassword shows prompt and reads a password from the terminal
	// without echo (--askpass).
	readPassword func(prompt string) ([]byte, error)
}

func newApp() *app {
	return &app{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		isTTY:  func() bool { return term.IsTerminal(int(os.Stdout.Fd())) },
		readPassword: func(prompt string) ([]byte, error) {
			return askPassword(os.Stdin, os.Stderr, prompt)
		},
	}
}

// run executes the command line and returns the exit status. Errors are
// printed as one line each: "vkwatch: <what went wrong>".
func (a *app) run(ctx context.Context, args []string) int {
	// SIGTERM and SIGHUP end vkwatch like q does: the terminal is restored,
	// servers the demo started are shut down, recordings are flushed.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGHUP, os.Interrupt)
	defer stop()

	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	if err != nil {
		// One line per error: two unreachable servers are two lines,
		// each saying who speaks.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(a.stderr, "vkwatch: %s\n", line)
		}
	}
	return codeOf(err)
}

func (a *app) rootCommand() *cobra.Command {
	mf := &monitorFlags{}
	cf := &connFlags{}
	root := &cobra.Command{
		Use:   "vkwatch [ADDR [ADDR2]] [-h HOST -p PORT | -s SOCKET | -u URI]",
		Short: "Watch what a snapshot costs a Valkey or Redis server, live",
		Long: `vkwatch connects to one or two Valkey/Redis servers and shows them side by side:
memory (used, RSS, copy-on-write), ops/s and PING latency as live charts, a progress
bar with ETA while a BGSAVE or AOF rewrite runs, and what the last save cost.

As in valkey-cli, -h HOST -p PORT, -s SOCKET or -u URI name the server; each
ADDR names one more. ADDR is host:port, host, :port, [::1]:port, a unix socket
path, or a URL redis:// rediss:// valkey:// valkeys:// (user, password and db
honoured). With none of them, vkwatch watches 127.0.0.1:6379. -h is the host:
help is --help.

Keys: b BGSAVE, a BGREWRITEAOF (focused server), B / A on both at once,
tab focus, p pause drawing, r save reports, ? help, q quit.`,
		Example: `  vkwatch demo                       # two local servers, side by side, under load
  vkwatch -h 10.0.0.5 -p 6380        # valkey-cli's flags
  vkwatch 127.0.0.1:6379 127.0.0.1:6380
  VALKEYCLI_AUTH=secret vkwatch valkeys://cache.internal:6380 --cacert ca.pem`,
		Version:       vkwatchVersion(),
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runMonitor(cmd.Context(), cf, mf, args)
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr("%v (see vkwatch --help)", err)
	})
	root.SetVersionTemplate("vkwatch {{.Version}}\n")
	// -h is the host (valkey-cli's), so help is --help alone. cobra adds
	// its own "-h, --help" to every command that lacks a help flag (and
	// panics on the clash with -h): one persistent --help covers them all,
	// cobra's help and completion commands included.
	root.PersistentFlags().Bool("help", false, "show this help")
	cf.register(root.PersistentFlags())
	mf.register(root.Flags())
	root.AddCommand(a.loadCommand(cf), a.demoCommand(cf), a.replayCommand(cf), a.benchCommand(cf))
	return root
}
