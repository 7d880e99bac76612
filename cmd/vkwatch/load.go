package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/live"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/watch"
	"github.com/vkwatch/vkwatch/ui/plain"
)

type loadFlags struct {
	conn        *connFlags
	keys        int
	valueSize   int
	writers     int
	prefix      string
	skipPreload bool
}

func (a *app) loadCommand() *cobra.Command {
	lf := &loadFlags{}
	cmd := &cobra.Command{
		Use:   "load [ADDR] [-h HOST -p PORT | -s SOCKET | -u URI]",
		Short: "Fill a server with a vkwatch-prefixed dataset, then write to it until stopped",
		Long: `load SETs N keys of B bytes (vkwatch:0 .. vkwatch:N-1), pipelined, then runs W
writers that overwrite random keys of that prefix (SET ... XX: never a new key)
as fast as they can until ctrl+c. With --skip-preload the keyspace must exist
already. It never reads, writes or deletes a key outside its prefix.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runLoad(cmd.Context(), lf.conn, lf, args)
		},
	}
	lf.conn = connFlagsOf(cmd)
	fs := cmd.Flags()
	fs.IntVar(&lf.keys, "keys", 1_000_000, "number of keys N")
	fs.IntVar(&lf.valueSize, "value-size", 300, "bytes per value B")
	fs.IntVar(&lf.writers, "writers", 8, "writers to run after the preload (0: preload only)")
	fs.StringVar(&lf.prefix, "prefix", load.DefaultPrefix, "key prefix")
	fs.BoolVar(&lf.skipPreload, "skip-preload", false, "start the writers on the keyspace already there, without filling it first")
	return cmd
}

func (a *app) runLoad(ctx context.Context, cf *connFlags, lf *loadFlags, addrs []string) error {
	if lf.keys < 1 || lf.valueSize < 1 || lf.writers < 0 {
		return usageErr("--keys and --value-size must be positive, --writers not negative")
	}
	if lf.prefix == "" {
		return usageErr("--prefix must not be empty: the load must never touch keys outside its prefix")
	}
	eps, err := a.explicit(ctx, cf, addrs, "load")
	if err != nil {
		return err
	}
	if len(eps) != 1 {
		return usageErr("load writes to one server, got %d (an ADDR and -h, -p, -s or -u)", len(eps))
	}
	opts, err := watch.RedisOptions(eps[0])
	if err != nil {
		return withCode(exitUsage, err)
	}
	cfg := load.Config{Prefix: lf.prefix, Keys: lf.keys, ValueSize: lf.valueSize, Writers: lf.writers}
	if !lf.skipPreload {
		if err := a.preloadShown(ctx, eps[0], opts, cfg); err != nil {
			return err
		}
		live.WarnNoPassword(ctx, a.stderr, eps) // the server answered the preload
	}
	if lf.writers == 0 {
		return nil
	}
	if lf.skipPreload {
		k, err := load.CheckKeyspace(ctx, opts, cfg)
		if err != nil {
			return withCode(exitConnect, fmt.Errorf("%s: %w", eps[0], err))
		}
		if err := k.Check(eps[0].String()); err != nil {
			return keyspaceRefusal(err, "load")
		}
		live.WarnNoPassword(ctx, a.stderr, eps) // the server answered the check
	}
	w, err := load.StartWriters(ctx, opts, cfg)
	if err != nil {
		return withCode(exitConnect, fmt.Errorf("%s: writers: %w", eps[0], err))
	}
	defer w.Stop()
	fmt.Fprintf(a.stderr, "%d writers running against %s; ctrl+c to stop\n", lf.writers, inert.Text(eps[0].String()))
	plain.Writers(ctx, a.stderr, a.errTTY(), w)
	return nil
}

// preloadShown fills the keyspace and says how long it took; meanwhile
// its progress (ui/plain).
func (a *app) preloadShown(ctx context.Context, ep source.Endpoint, opts *redis.Options, cfg load.Config) error {
	p := plain.NewPreload(a.stderr, a.errTTY())
	err := load.Preload(ctx, opts, cfg, p.Update)
	took := p.End()
	if err != nil {
		return withCode(exitConnect, fmt.Errorf("%s: preload: %w", ep, err))
	}
	fmt.Fprintf(a.stderr, "preloaded %d keys of %d bytes under %q in %s\n", cfg.Keys, cfg.ValueSize, cfg.Prefix, took.Round(time.Millisecond))
	return nil
}
