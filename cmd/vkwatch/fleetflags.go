package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/nodefile"
	"github.com/vkwatch/vkwatch/source/observer"
	"github.com/vkwatch/vkwatch/source/shard"
)

// nodesPoll is how often a --nodes file is looked at for a change.
const nodesPoll = time.Second

// defaultMaxObserverCost is --max-observer-cost's default: a node whose
// watching takes more than 1% of its main thread (10 ms a second) has its
// intervals lengthened. At the defaults one node costs about 0.1-0.2%
// (500 PINGs and one INFO a second), a fleet's node at rest far less.
const defaultMaxObserverCost = "1%"

// fleetFlags are the flags that name a fleet beyond the command line and
// split it: --nodes (monitor, bench, save) and --shard, and the monitor's
// --max-observer-cost.
type fleetFlags struct {
	nodes           string
	shardText       string
	share           shard.Share
	maxObserverText string
	maxObserver     float64
}

func (f *fleetFlags) registerNodes(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.nodes, "nodes", "", what+" every server the file FILE names, one address or URL a line (# starts a comment)")
}

func (f *fleetFlags) registerShard(fs *pflag.FlagSet) {
	fs.StringVar(&f.shardText, "shard", "", "watch only share I of N of the nodes (I/N, 0 <= I < N): those whose address hashes to I, "+
		"as Prometheus' hashmod does, so that N exporters split a fleet")
	fs.StringVar(&f.maxObserverText, "max-observer-cost", defaultMaxObserverCost, "the most of a node's main thread vkwatch's own commands may take "+
		"(a share: 1% or 0.01); a node over it is PINGed and sampled less often at rest, and the fleet says so")
}

// validate checks the fleet flags against the addresses and --cluster.
func (f *fleetFlags) validate(cf *connFlags, cluster string, addrs []string) error {
	if f.nodes != "" {
		if cluster != "" {
			return usageErr("--nodes and --cluster both name the fleet: give one")
		}
		if err := cf.alone("--nodes "+f.nodes+" names every server", addrs); err != nil {
			return err
		}
	}
	if f.shardText != "" {
		s, err := shard.Parse(f.shardText)
		if err != nil {
			return usageErr("--shard: %v", err)
		}
		f.share = s
	}
	if f.maxObserverText != "" {
		v, err := observer.ParseShare(f.maxObserverText)
		if err != nil {
			return usageErr("--max-observer-cost %q: %v", f.maxObserverText, err)
		}
		f.maxObserver = v
	}
	return nil
}

// nodesParser reads a nodes file's lines as the command line's addresses
// are read, each with the credentials and TLS the flags give (a password
// in the file is not on the command line: no warning). After start no
// line may need --askpass's prompt: a UI is on the terminal then.
func (a *app) nodesParser(ctx context.Context, cf *connFlags) (parse nodefile.Parse, started func()) {
	cred := a.credentials(ctx, cf, nil)
	if cf.pass == "" {
		cred.Warn = nil
	}
	afterStart := false
	parse = func(addr string) (source.Endpoint, error) {
		ep, err := source.ParseAddress(addr)
		if err != nil {
			return ep, err
		}
		if afterStart && cf.askpass && ep.Password == "" && !cred.Asked() {
			return ep, errors.New("needs --askpass's password, which was not asked at start: give it in the line's URL")
		}
		if err := cred.Fill(&ep); err != nil {
			return ep, err
		}
		return ep, cf.apply(&ep)
	}
	return parse, func() { afterStart = true }
}

// readNodes reads --nodes at start: a bad file is a usage error (exit 2)
// naming the file and line.
func (a *app) readNodes(ctx context.Context, cf *connFlags, path string) (nodefile.List, nodefile.Parse, error) {
	parse, started := a.nodesParser(ctx, cf)
	l, err := nodefile.Read(path, parse)
	if err != nil {
		if ctx.Err() != nil {
			return l, nil, err
		}
		return l, nil, usageErr("--nodes: %v", err)
	}
	started()
	return l, parse, nil
}

// nodesOnce reads --nodes FILE for bench and save: the file's servers,
// read once at start, and no other server named beside them.
func (a *app) nodesOnce(ctx context.Context, cf *connFlags, path string, args []string) ([]source.Endpoint, error) {
	if err := cf.alone("--nodes "+path+" names every server", args); err != nil {
		return nil, err
	}
	l, _, err := a.readNodes(ctx, cf, path)
	return l.Endpoints, err
}
