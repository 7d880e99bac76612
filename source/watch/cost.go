package watch

import (
	"context"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/observer"
)

// ownCalls counts vkwatch's own commands by name, as INFO commandstats
// names them ("info", "config get"), from the clients' hooks.
type ownCalls struct {
	mu sync.Mutex
	by observer.Counts
}

// subcommanded are the commands whose commandstats line (7.0 and later)
// is per subcommand.
var subcommanded = map[string]bool{"config": true, "cluster": true, "client": true, "command": true,
	"latency": true, "slowlog": true, "memory": true, "object": true, "acl": true}

func (o *ownCalls) add(cmd redis.Cmder) {
	name := strings.ToLower(cmd.Name())
	if args := cmd.Args(); subcommanded[name] && len(args) > 1 {
		if sub, ok := args[1].(string); ok {
			name += " " + strings.ToLower(sub)
		}
	}
	o.mu.Lock()
	if o.by == nil {
		o.by = observer.Counts{}
	}
	o.by[name]++
	o.mu.Unlock()
}

// counts are vkwatch's own commands on the server so far: the clients'
// and the probe's PINGs.
func (s *sampling) ownCounts() observer.Counts {
	o := &s.w.ownByName
	o.mu.Lock()
	c := make(observer.Counts, len(o.by)+1)
	for k, v := range o.by {
		c[k] = v
	}
	o.mu.Unlock()
	if s.probe != nil {
		c["ping"] += s.probe.Answered()
	}
	return c
}

// commandstatsArgs is the reading of the server's own time per command.
var commandstatsArgs = []any{"info", "commandstats"}

// observe prices vkwatch's own commands (see package observer) into smp:
// INFO commandstats is read at the first sample of a run and every
// CostEvery after, and the sample carries the cost so far and the share
// of a core of the latest window. A server that refuses the reading (or
// answers it without a command's stats) leaves the cost absent.
func (s *sampling) observe(ctx context.Context, smp *source.Sample, restarted bool) {
	w := s.w
	if w.cfg.CostEvery < 0 {
		return
	}
	if !s.meter.Ready() || restarted || smp.Offset-s.costAt >= w.cfg.CostEvery {
		ictx, cancel := context.WithTimeout(ctx, infoTimeout)
		text, err := w.samplerDo(ictx, commandstatsArgs...)
		cancel()
		if st := observer.ParseCommandStats(text); err == nil && len(st) > 0 {
			// The reading is an INFO of vkwatch's own: counted before
			// the counts are taken, as the server counted it before
			// answering.
			s.meter.Observe(st, s.ownCounts(), w.clock.Offset(), restarted)
			s.costAt = w.clock.Offset()
		}
	}
	if !s.meter.Ready() {
		return
	}
	smp.Observer.Seconds = source.Some(s.meter.Seconds())
	smp.Observer.ReadAt = s.costAt
	if share, window, ok := s.meter.Share(); ok {
		smp.Observer.Share = source.Some(share)
		smp.Observer.Window = window
	}
}
