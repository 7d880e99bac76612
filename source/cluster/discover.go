package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/watch"
)

// Defaults of Config's zero fields.
const (
	// DefaultEvery is how often the topology is asked for again: a node
	// added or removed shows within a few seconds, and one CLUSTER SHARDS
	// every 3 s costs a cluster nothing.
	DefaultEvery = 3 * time.Second
	// DefaultTimeout bounds one question to one node.
	DefaultTimeout = 3 * time.Second
)

// After a Poke the topology is asked for again pokeFollowUps more times,
// pokeEvery apart: a failover takes the other nodes a moment to agree on,
// and the first answer after a role change may still be the old one.
const (
	pokeEvery     = 500 * time.Millisecond
	pokeFollowUps = 4
)

// Config tunes a Discoverer. Zero values take the defaults.
type Config struct {
	Every   time.Duration
	Timeout time.Duration
}

// ErrNotCluster is wrapped by Discover's error when the node asked runs
// without cluster mode.
var ErrNotCluster = errors.New("not a cluster node (cluster_enabled:0)")

// Discoverer finds a cluster's topology from a seed node and follows it.
// Every node is reached with the seed's credentials and TLS settings.
type Discoverer struct {
	seed source.Endpoint
	cfg  Config
	poke chan struct{}

	// dmu serialises discoveries (Discover from the caller, Run's loop).
	dmu sync.Mutex
	// Guarded by dmu:
	last     source.Topology // the latest topology that was read
	have     bool
	noShards bool // the cluster does not know CLUSTER SHARDS: ask CLUSTER NODES
	conn     *redis.Client
	connEp   source.Endpoint // where conn goes
}

// New returns a Discoverer starting from seed. Nothing is dialled until
// Discover or Run.
func New(seed source.Endpoint, cfg Config) *Discoverer {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	watch.QuietRedis()
	return &Discoverer{seed: seed, cfg: cfg, poke: make(chan struct{}, 1)}
}

// Seed returns the endpoint discovery started from.
func (d *Discoverer) Seed() source.Endpoint { return d.seed }

// NodeEndpoint is how vkwatch reaches node n of the cluster found from
// seed: the seed's credentials, database and TLS settings, n's address.
func NodeEndpoint(seed source.Endpoint, n source.TopologyNode) source.Endpoint {
	ep := seed
	ep.Network = "tcp"
	ep.Addr = n.Addr
	return ep
}

// Discover asks for the topology once: the node that answered last, then
// the seed, then every other node known from the last answer (healthy ones
// first), until one answers. The error says why the seed, and how many
// others, did not.
func (d *Discoverer) Discover(ctx context.Context) (source.Topology, error) {
	d.dmu.Lock()
	defer d.dmu.Unlock()
	var first error
	tried := 0
	for _, ep := range d.candidates() {
		if ctx.Err() != nil {
			return source.Topology{}, ctx.Err()
		}
		top, err := d.ask(ctx, ep)
		if err == nil {
			d.last, d.have = top, true
			return top, nil
		}
		if errors.Is(err, ErrNotCluster) {
			return source.Topology{}, fmt.Errorf("%s: %w", ep, err)
		}
		tried++
		if first == nil {
			first = fmt.Errorf("%s: %w", ep, err)
		}
	}
	if tried > 1 {
		return source.Topology{}, fmt.Errorf("%w (and %d other nodes did not answer either)", first, tried-1)
	}
	return source.Topology{}, first
}

// candidates are the endpoints to ask, in order, each once.
func (d *Discoverer) candidates() []source.Endpoint {
	var out []source.Endpoint
	seen := map[string]bool{}
	add := func(ep source.Endpoint) {
		if ep.Addr != "" && !seen[ep.Network+" "+ep.Addr] {
			seen[ep.Network+" "+ep.Addr] = true
			out = append(out, ep)
		}
	}
	if d.conn != nil {
		add(d.connEp)
	}
	add(d.seed)
	if d.have {
		for _, healthy := range []bool{true, false} {
			for _, n := range d.last.Nodes() {
				if (n.Health != source.HealthFailed) == healthy && n.Addr != "" {
					add(NodeEndpoint(d.seed, n))
				}
			}
		}
	}
	return out
}

// client returns a client of ep, reusing the open one when it goes there.
func (d *Discoverer) client(ep source.Endpoint) (*redis.Client, error) {
	if d.conn != nil && d.connEp.Network == ep.Network && d.connEp.Addr == ep.Addr {
		return d.conn, nil
	}
	d.drop()
	opts, err := watch.RedisOptions(ep)
	if err != nil {
		return nil, err
	}
	opts.DialTimeout = d.cfg.Timeout
	opts.ReadTimeout = d.cfg.Timeout
	opts.WriteTimeout = d.cfg.Timeout
	opts.ContextTimeoutEnabled = true
	opts.DialerRetries = 1
	opts.MaxRetries = -1
	opts.PoolSize = 1
	d.conn, d.connEp = redis.NewClient(opts), ep
	return d.conn, nil
}

// drop closes the open client.
func (d *Discoverer) drop() {
	if d.conn != nil {
		d.conn.Close()
		d.conn, d.connEp = nil, source.Endpoint{}
	}
}

// ask asks one node: CLUSTER SHARDS, or CLUSTER NODES where SHARDS is
// unknown (before Redis 7.0).
func (d *Discoverer) ask(ctx context.Context, ep source.Endpoint) (source.Topology, error) {
	c, err := d.client(ep)
	if err != nil {
		return source.Topology{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	top := source.Topology{Cluster: true, From: ep.Addr}
	tls := ep.TLS.Enabled
	if !d.noShards {
		v, err := c.Do(ctx, "CLUSTER", "SHARDS").Result()
		switch {
		case err == nil:
			top.Via = "CLUSTER SHARDS"
			top.Shards, err = ParseShards(v, tls)
			return top, err
		case unknownCommand(err):
			d.noShards = true
		default:
			return top, d.failed(err)
		}
	}
	s, err := c.Do(ctx, "CLUSTER", "NODES").Text()
	if err != nil {
		return top, d.failed(err)
	}
	top.Via = "CLUSTER NODES"
	top.Shards, err = ParseNodes(s)
	return top, err
}

// failed turns an error of a question into the error to report, dropping
// the connection when it is suspect.
func (d *Discoverer) failed(err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		if strings.Contains(rerr.Error(), "cluster support disabled") {
			return ErrNotCluster
		}
		return errors.New(oneLine(rerr.Error()))
	}
	d.drop()
	return errors.New(oneLine(strings.TrimPrefix(err.Error(), "redis: ")))
}

// unknownCommand reports whether the server does not know the command
// (Redis before 7.0 for CLUSTER SHARDS).
func unknownCommand(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	s := strings.ToLower(rerr.Error())
	return strings.Contains(s, "unknown subcommand") || strings.Contains(s, "unknown command")
}

func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// Poke asks Run to rediscover now, and a few times more shortly after: a
// watched node's role changed.
func (d *Discoverer) Poke() {
	select {
	case d.poke <- struct{}{}:
	default:
	}
}

// Run rediscovers every Every, and on Poke, until ctx ends, and calls emit
// (from Run's goroutine) with each topology that differs from the one
// before it: nodes, roles, primaries or health (Changes says how), or the
// error of a failed rediscovery (Err; the shards stay the last known). The
// first comparison is with the topology of the last Discover.
func (d *Discoverer) Run(ctx context.Context, emit func(source.Topology)) {
	d.dmu.Lock()
	prev := d.last
	d.dmu.Unlock()
	timer := time.NewTimer(d.cfg.Every)
	defer timer.Stop()
	follow := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-d.poke:
			follow = pokeFollowUps
		}
		top, err := d.Discover(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			top = prev
			top.Changes = nil
			top.Err = err.Error()
		}
		if ch := Diff(prev, top); len(ch) > 0 || top.Err != prev.Err {
			top.Changes = ch
			emit(top)
			prev = top
		}
		next := d.cfg.Every
		if follow > 0 {
			follow--
			next = pokeEvery
		}
		timer.Reset(next)
	}
}

// Close closes the discoverer's connection. Run must have returned.
func (d *Discoverer) Close() error {
	d.dmu.Lock()
	defer d.dmu.Unlock()
	d.drop()
	return nil
}
