package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/demo"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/load"
)

type demoFlags struct {
	serverBin string
	scenario  string
	saveDelay int
}

func (a *app) demoCommand() *cobra.Command {
	df := &demoFlags{}
	mf := &monitorFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start two local servers under load and watch them side by side",
		Long: `demo finds valkey-server or redis-server on PATH, starts two servers on free
loopback ports in a temporary directory, fills both with the same dataset, starts
the same write load and opens the monitor on them side by side. Press B to save
both at once. Quitting in any way stops the writers, shuts the servers down and
removes the temporary directory.

Scenarios:
  fork-vs-forkless  left saves by fork, right forkless (Valkey 9.2+ only)
  idle-vs-load      both fork; left idle, right under write load: copy-on-write
                    only costs while pages are written during the save
  auto              fork-vs-forkless when the binary supports it, else idle-vs-load`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := mf.validate(); err != nil {
				return err
			}
			return a.runDemo(cmd.Context(), df, mf)
		},
	}
	fs := cmd.Flags()
	mf.register(fs)
	// Two servers of its own, side by side: no cluster, no fleet view
	// whose rolling save --max-parallel-saves paces, and --read-only would
	// refuse the writes the demo is for (registerServers is the monitor's).
	mf.maxParallelSaves = 1
	// The demo's defaults: a laptop-sized dataset under 8 writers per server.
	fs.Lookup("writers").DefValue = "8"
	mf.writers = 8
	fs.Lookup("keys").Usage = "keys each server is filled with (vkwatch:0 .. vkwatch:N-1) before its writers start"
	fs.StringVar(&df.serverBin, "server-bin", "", "server binary to run (default: valkey-server, else redis-server, on PATH)")
	fs.StringVar(&df.scenario, "scenario", string(demo.ScenarioAuto), "auto, fork-vs-forkless or idle-vs-load")
	fs.IntVar(&df.saveDelay, "save-delay", 0, "rdb-key-save-delay in microseconds per key on both servers, to stretch saves on small machines")
	return cmd
}

func (a *app) runDemo(ctx context.Context, df *demoFlags, mf *monitorFlags) (err error) {
	sc := demo.Scenario(df.scenario)
	switch sc {
	case demo.ScenarioAuto, demo.ScenarioForkless, demo.ScenarioLoad:
	default:
		return usageErr("--scenario %q: want auto, fork-vs-forkless or idle-vs-load", df.scenario)
	}
	if df.saveDelay < 0 {
		return usageErr("--save-delay must not be negative")
	}
	// Check for a terminal before starting anything.
	if (mf.headless || !a.isTTY()) && mf.record == "" && mf.metrics == "" {
		return withCode(exitNoTTY, errors.New("standard output is not a terminal: the demo needs one (or --record FILE or --metrics ADDR to run it headless)"))
	}
	d, err := demo.Start(ctx, demo.Config{
		ServerBin: df.serverBin,
		Keys:      mf.keys,
		ValueSize: mf.valueSize,
		Writers:   mf.writers,
		Scenario:  sc,
		SaveDelay: df.saveDelay,
		Progress:  func(msg string) { fmt.Fprintln(a.stderr, "vkwatch demo:", inert.Text(msg)) },
	})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := d.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	eps := make([]source.Endpoint, 2)
	for i, s := range d.Servers {
		ep, perr := source.ParseAddress(s.Addr)
		if perr != nil {
			return perr
		}
		eps[i] = ep
	}
	return a.monitor(ctx, monitorRun{
		endpoints: eps,
		flags:     mf,
		banner:    "demo: " + d.Why,
		hint:      "press B to save both",
		writers:   []*load.Writers{d.Writers[0], d.Writers[1]},
	})
}
