package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/ui/tty"
)

// version is set at build time with -ldflags "-X main.version=..." (a
// packager's own version); when it is not, the module version from the
// build info is used.
var version = ""

// vkwatchVersion is what --version prints after "vkwatch " and what a
// recording's header keeps: the version, the VCS revision, and whether
// the tree had uncommitted changes, as the Go toolchain stamped them.
func vkwatchVersion() string {
	bi, ok := debug.ReadBuildInfo()
	return versionString(version, bi, ok)
}

// versionString says honestly what a build knows about itself. What the
// toolchain stamps (Go 1.26):
//   - go build and go install in a git clone: the module version (the tag,
//     or a pseudo-version v0.0.0-TIME-REV, "+dirty" when modified) and
//     vcs.revision, vcs.time, vcs.modified;
//   - go run, a build in a git worktree (.git is a file there, which the
//     toolchain does not take for a repository) or with -buildvcs=false:
//     "(devel)" and no revision;
//   - go install module@version: that version and no revision.
//
// So the revision and the modified flag are printed when stamped, and
// their absence is said rather than hidden.
func versionString(ldflag string, bi *debug.BuildInfo, ok bool) string {
	v := ldflag
	if v == "" && ok {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	if !ok {
		return v + ", no build info"
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	var b strings.Builder
	b.WriteString(v)
	if rev := set["vcs.revision"]; rev != "" {
		b.WriteString(" rev " + rev[:min(12, len(rev))])
		var extra []string
		if t := set["vcs.time"]; t != "" {
			extra = append(extra, t)
		}
		if set["vcs.modified"] == "true" {
			extra = append(extra, "modified")
		}
		if len(extra) > 0 {
			b.WriteString(" (" + strings.Join(extra, ", ") + ")")
		}
	} else if !strings.HasPrefix(v, "v") || v == "(devel)" {
		// A released version names its source; a development build
		// without a revision names nothing, so say why.
		b.WriteString(", no VCS revision stamped (go run, a git worktree or -buildvcs=false)")
	}
	if bi.GoVersion != "" {
		b.WriteString(", " + bi.GoVersion)
	}
	return b.String()
}

// app holds the process's outside world so that tests can replace it.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// isTTY reports whether stdout is a terminal.
	isTTY func() bool
	// errTTY reports whether stderr is a terminal: progress redrawn in
	// place (a bar, \r) goes only there.
	errTTY func() bool
	// readPassword shows prompt and reads a password from the terminal
	// without echo (--askpass); it returns at once when ctx ends (ctrl+c).
	readPassword func(ctx context.Context, prompt string) ([]byte, error)
}

func newApp() *app {
	return &app{
		stdin:  os.Stdin,
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		isTTY:  func() bool { return term.IsTerminal(int(os.Stdout.Fd())) },
		errTTY: func() bool { return term.IsTerminal(int(os.Stderr.Fd())) },
		readPassword: func(ctx context.Context, prompt string) ([]byte, error) {
			return tty.AskPassword(ctx, os.Stdin, os.Stderr, prompt)
		},
	}
}

// run executes the command line and returns the exit status (see
// exitStatuses). Errors are printed as one line each: "vkwatch: <what went
// wrong>".
func (a *app) run(ctx context.Context, args []string) int {
	// ctrl+c (SIGINT), SIGTERM and SIGHUP end vkwatch like q does: the
	// terminal is restored, servers the demo started are shut down,
	// recordings are flushed.
	ctx, stop := notifyContext(ctx)
	defer stop()

	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	err := root.ExecuteContext(ctx)
	code, err := ending(ctx, err)
	if err != nil {
		// One line per error: two unreachable servers are two lines,
		// each saying who speaks. A line may quote a server's error or
		// an address: made inert, it cannot drive the terminal.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(a.stderr, "vkwatch: %s\n", inert.Text(line))
		}
	}
	return code
}

// ending is the exit status of a run that returned err, and the error to
// print. ctrl+c, as a signal or as the key in the UI, is 130 whatever the
// run was doing; what it cut short (a connection, a prompt) is no error to
// print. SIGTERM and SIGHUP end a run that goes on until stopped (the
// monitor, demo, replay, load) like q; work they cut short (bench, save)
// failed, and says so.
func ending(ctx context.Context, err error) (int, error) {
	var sig *signalled
	got := errors.As(context.Cause(ctx), &sig)
	cut := errors.Is(err, context.Canceled)
	switch {
	case errors.Is(err, tea.ErrInterrupted) || got && sig.sig == os.Interrupt:
		if cut || errors.Is(err, tea.ErrInterrupted) {
			err = nil
		}
		return exitInterrupted, err
	case got && cut:
		return exitError, fmt.Errorf("stopped by %s before the end", sig)
	}
	return codeOf(err), err
}

// signalled is the cause of the run's context when a signal ended it; as
// the context's own error, it is context.Canceled.
type signalled struct{ sig os.Signal }

func (s *signalled) Is(target error) bool { return target == context.Canceled }

func (s *signalled) Error() string {
	if s.sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	if s.sig == syscall.SIGHUP {
		return "SIGHUP"
	}
	return "ctrl+c"
}

// notifyContext is signal.NotifyContext with the signal as the cause. The
// first signal ends the run gracefully; a second one, the default way (a
// second ctrl+c kills a run that takes too long to end).
func notifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(&signalled{sig: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

func (a *app) rootCommand() *cobra.Command {
	mf := &monitorFlags{}
	var cf *connFlags
	root := &cobra.Command{
		Use:   "vkwatch [ADDR ...] [-h HOST -p PORT | -s SOCKET | -u URI] | --cluster ADDR | --nodes FILE",
		Short: "Watch what a snapshot costs a Valkey or Redis server, live",
		Long: `vkwatch connects to Valkey/Redis servers and shows them, one or two side by side:
memory (used, RSS, copy-on-write), ops/s and PING latency as live charts, a progress
bar with ETA while a BGSAVE or AOF rewrite runs, and what the last save cost.
--cluster ADDR watches every node of ADDR's cluster and follows it live; any
number of addresses can be given. A cluster, or three or more servers, show as
the fleet view: one row per node, grouped by shard, with small charts; B there
is a rolling save, one replica per shard, one at a time. With more than two
servers the PINGs are paced to about 1,000 a second in all (--ping-interval
sets it per server).

As in valkey-cli, -h HOST -p PORT, -s SOCKET or -u URI name the server; each
ADDR names one more. ADDR is host:port, host, :port, [::1]:port, a unix socket
path, or a URL redis:// rediss:// valkey:// valkeys:// (user, password and db
honoured). With none of them, vkwatch watches 127.0.0.1:6379. -h is the host:
help is --help (on the commands that connect to nothing, -h is help too).

Keys: b BGSAVE, a BGREWRITEAOF (focused server), B / A on both at once (one or
two), x BGSAVE CANCEL (Valkey 8.1+; asks first), M fork/forkless (asks
first; kept on quit), tab focus, p pause drawing,
r save reports, c cost curves, s scales, S screen to SVG, ? help, q quit,
ctrl+c quit at once (exit 130), ctrl+z suspend. In the fleet view: up/down
(j/k) select, enter opens a node (two marked with space: side by side), esc
returns, o sorts, B rolling save (B again starts it, esc cancels the rest).`,
		Example: `  vkwatch demo                       # two local servers, side by side, under load
  vkwatch -h 10.0.0.5 -p 6380        # valkey-cli's flags
  vkwatch 127.0.0.1:6379 127.0.0.1:6380
  vkwatch --cluster 10.0.0.7:6379    # every node of the cluster
  vkwatch --nodes fleet.txt --metrics :9470 --shard 0/4   # a quarter of a fleet, exported
  VALKEYCLI_AUTH=secret vkwatch valkeys://cache.internal:6380 --cacert ca.pem`,
		Version:       vkwatchVersion(),
		Args:          notACommand,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runMonitor(cmd.Context(), cf, mf, args)
		},
	}
	root.SetVersionTemplate("vkwatch {{.Version}}\n")
	cf = connFlagsOf(root)
	mf.register(root.Flags())
	mf.registerServers(root.Flags())
	root.AddCommand(a.loadCommand(), a.demoCommand(), a.replayCommand(), a.recordingCommand(), a.benchCommand(), a.reportCommand(), a.saveCommand())
	root.AddCommand(a.metricsCommand())
	finishTree(root)
	return root
}
