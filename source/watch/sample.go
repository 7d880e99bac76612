package watch

import (
	"context"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/probe"
)

// infoArgs are the INFO sections the sampler asks for, in one call (a
// full INFO costs the server more; several sections in one call needs
// Redis 7.0 or later).
var infoArgs = []any{"info", "server", "replication", "memory", "stats", "persistence"}

// infoWithClients adds the clients section while a save runs or one is
// coming (see clientsWanted): its blocked_clients counts the writers a
// forkless save holds up, and a server at rest pays nothing more.
var infoWithClients = append(append([]any(nil), infoArgs...), "clients")

// comingFor is how long after a save command vkwatch sent (BGSAVE,
// BGREWRITEAOF) the sampler keeps asking for the clients section, so
// that the samples around the save's start have blocked_clients: a save
// too short to be seen is over by then.
const comingFor = 3 * time.Second

// connectInfoArgs add, on connecting, the cluster section: one line,
// cluster_enabled, which cannot change while the server runs, so the
// samples after do not ask for it again.
var connectInfoArgs = append(append([]any(nil), infoArgs...), "cluster")

// clientsWanted says whether the next INFO asks for the clients section:
// while the last sample shows a save or rewrite running, or one coming
// (an AOF rewrite scheduled, a replica waiting for a full sync: what the
// fleet's attention follows too), and for comingFor after vkwatch sent a
// save command. Not between saves: an idle server is asked no more.
func (s *sampling) clientsWanted() bool {
	if s.w.starting.Load() > 0 {
		return true
	}
	if at := s.w.saveSent.Load(); at > 0 && s.w.clock.Offset()-time.Duration(at) < comingFor {
		return true
	}
	in := s.prev
	if in == nil {
		return false
	}
	_, running := source.SaveKindOf(in)
	return running || in.AOFRewriteScheduled.V == 1 || in.ReplicasWaitingBGSave > 0
}

// sampleWait is how long after now (probe.Now) the sampler's next grid
// point is: a multiple of the interval from the probes' epoch (probe.Now's
// zero), shifted by the node's place (spread, probe.Spread of its
// address) and half the greatest common divisor of the interval and the
// PING interval. No sample falls on a PING of the node's own probe (its
// grid: multiples of the PING interval from the same epoch, shifted by
// probe.Phase): the two stay at least half that divisor apart (1 ms at the
// defaults, 2 ms and 200 ms; 4 ms for a fleet PINGing every 16 ms). An INFO
// arriving with vkwatch's own PING would delay it and show vkwatch's INFO
// as the server's latency. Within that, a fleet's samplers of one interval
// are spread over it in steps of the divisor (a thousand nodes sampled
// every 5 s and PINGed every second: 5 places a PING phase, about 350 in
// all), not all woken with a thousand INFO replies on the same instant.
func sampleWait(now int64, interval, ping time.Duration, spread uint32) time.Duration {
	iv := int64(interval)
	phase := int64(0)
	if ping > 0 {
		g := gcd(iv, int64(ping))
		slot := int64(uint64(spread&0xffff) * uint64(iv/g) >> 16)
		phase = (probe.Phase(spread, ping) + g/2 + slot*g) % iv
	}
	if now < phase {
		return time.Duration(phase - now)
	}
	return time.Duration(((now-phase)/iv+1)*iv + phase - now)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// sample turns one INFO reply, sent at offset sent and received at at,
// into a Sample, the spikes it bounds and its save events.
func (s *sampling) sample(ctx context.Context, text string, sent, at time.Duration) {
	w := s.w
	s.lastAnswer = at
	smp := &source.Sample{Seq: s.seq, Offset: at, At: w.clock.At(at)}
	s.seq++
	if s.prev != nil {
		// Reuse the previous strings (see ParseInfoInto).
		smp.Info = *s.prev
	}
	source.ParseInfoInto(&smp.Info, text)
	in := &smp.Info

	if s.probe != nil {
		// First: the summary has the probe read the replies that have
		// arrived, so that the PINGs the server ran before this INFO are
		// in answered (a reply is otherwise read at the probe's next
		// tick, and the first interval would charge it to the server).
		smp.Ping, smp.Ping10s = s.probe.Summary()
	}
	own := w.ownCmds.Load()
	if s.probe != nil {
		own += s.probe.Answered()
	}
	var writer uint64
	if w.cfg.WriterOps != nil {
		writer = w.cfg.WriterOps()
	}
	restarted := s.prev != nil && source.Restarted(s.prev, in)
	if p := s.prev; p != nil && !restarted {
		dt := (at - s.prevAt).Seconds()
		if dt > 0 {
			if in.TotalCommands.OK && p.TotalCommands.OK {
				// A PING answered around the INFO may be counted by the
				// server in one interval and by us in the next: carry a
				// negative difference over instead of clamping it, so
				// the rate has no bias and is never negative.
				d := float64(in.TotalCommands.V-p.TotalCommands.V-int64(own-s.prevOwn)) + s.opsCarry
				s.opsCarry = min(d, 0)
				smp.OpsPerSec = source.Some(max(d, 0) / dt)
			}
			if w.cfg.WriterOps != nil && writer >= s.prevWriter {
				smp.WriterOpsPerSec = source.Some(float64(writer-s.prevWriter) / dt)
			}
		}
	}
	s.prev, s.prevAt, s.prevOwn, s.prevWriter = in, at, own, writer

	if w.cfg.Proc != nil && w.ep.Local() && in.ProcessID.OK {
		smp.Proc = w.cfg.Proc(in.ProcessID.V)
	}
	if stale := w.configStale.Swap(false); stale || !s.haveConfig || at-s.configAt >= configEvery {
		s.config = w.readConfig(ctx)
		s.configAt, s.haveConfig = at, true
	}
	smp.Config = s.config
	s.sampleSpikes(ctx, smp, sent)
	s.observe(ctx, smp, restarted)

	// Answers that came before this INFO reply go to the tracker first, in
	// the order a recording keeps them. The tracker derives the rest of the
	// sample (its instruments and save progress), as a recording's reader
	// does again.
	s.answers()
	started, ended := s.tracker.Observe(smp)
	s.push(source.Event{Kind: source.EventSample, Offset: at, Sample: smp})
	if started {
		s.push(source.Event{Kind: source.EventSaveStarted, Offset: at, Sample: smp})
	}
	if ended != nil {
		s.push(source.Event{Kind: source.EventSaveEnded, Offset: at, Report: ended})
	}
}
