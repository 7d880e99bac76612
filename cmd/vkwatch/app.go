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
		Use:   "vkwatch [ADDR ...] | --cluster ADDR",
		Short: "Watch what a snapshot costs a Valkey or Redis server, live",
		Long: `vkwatch connects to Valkey/Redis servers and shows them, one or two side by side:
memory (used, RSS, copy-on-write), ops/s and PING latency as live charts, a progress
bar with ETA while a BGSAVE or AOF rewrite runs, and what the last save cost.
--cluster ADDR watches every node of ADDR's cluster and follows it live; any
number of addresses can be given. With more than two servers the PINGs are paced
to about 1,000 a second in all (--ping-interval sets it per server).

ADDR is host:port, host, :port, [::1]:port, a unix socket path, or a URL
redis:// rediss:// valkey:// valkeys:// (user, password and db honoured).
With no ADDR, vkwatch watches 127.0.0.1:6379.

Keys: b BGSAVE, a BGREWRITEAOF (focused server), B / A on both at once (one or two),
tab focus, p pause drawing, r save reports, ? help, q quit.`,
		Example: `  vkwatch demo                       # two local servers, side by side, under load
  vkwatch 127.0.0.1:6379 127.0.0.1:6380
  vkwatch --cluster 10.0.0.7:6379    # every node of the cluster
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
	cf.register(root.PersistentFlags())
	mf.register(root.Flags())
	root.AddCommand(a.loadCommand(cf), a.demoCommand(mf), a.replayCommand(), a.benchCommand(cf))
	return root
}
