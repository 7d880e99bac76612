package watch

import (
	"context"
	"sync"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/observer"
	"github.com/vkwatch/vkwatch/source/probe"
	"github.com/vkwatch/vkwatch/source/queue"
	"github.com/vkwatch/vkwatch/source/saves"
)

const (
	// infoTimeout bounds one INFO of the sampler: longer than any INFO
	// takes, short enough that a stalled server is reported within ~2 s.
	infoTimeout = 1500 * time.Millisecond
	// backoffMin and backoffMax bound the wait between reconnects: a
	// restarted server is watched again within 2 s.
	backoffMin = 100 * time.Millisecond
	backoffMax = 500 * time.Millisecond
)

// Run watches the server until ctx is done or the watcher is closed. emit
// receives, one call at a time and in order: EventConnected, then an
// EventSample every Interval (or as SetInterval last set it), EventSaveStarted / EventSaveEnded around
// saves, EventDisconnected when the server cannot be reached or stops
// answering (once per outage; Run keeps retrying with backoff capped at
// 500 ms) and EventConnected again when it is back, and EventCommand for
// the results of Do. emit runs on a goroutine of its own, so a slow emit
// never delays sampling; Run returns after the emit call in progress has.
// Run must not be called twice at the same time.
//
// Sample.OpsPerSec is the delta of total_commands_processed between two
// samples, minus the commands vkwatch itself sent in that time (the
// probe's answered PINGs, the sampler's INFO and CONFIG GET, and the
// set-up of every connection of the watcher, see ownCounter), divided
// by the monotonic time between the two INFO replies. It is absent on the
// first sample after a (re)connect and after a restart of the server
// (uptime drop or new process id). Commands sent with Do are not
// subtracted: they are the user's.
func (w *Watcher) Run(ctx context.Context, emit func(source.Event)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	// Close ends Run.
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-w.closeCh:
			cancel()
		case <-ctx.Done():
		}
	}()

	q := queue.New[source.Event]()
	w.setRunning(true)
	wg.Add(1)
	go func() {
		defer wg.Done()
		emitQueued(ctx, q, emit)
	}()
	defer func() {
		w.setRunning(false)
		cancel()
		wg.Wait()
	}()

	s := &sampling{w: w, q: q, tracker: saves.NewTracker(w.node, w.ep.String())}
	s.loop(ctx, &wg)
}

// setRunning says whether Run runs, and so whether Do keeps its results
// for the sampler.
func (w *Watcher) setRunning(on bool) {
	w.answersMu.Lock()
	w.running = on
	w.answersMu.Unlock()
}

// sampling is the state of one Run.
type sampling struct {
	w       *Watcher
	q       *queue.Queue[source.Event]
	tracker *saves.Tracker
	probe   *probe.Probe

	seq        uint64
	id         source.Identity
	prev       *source.Info // the previous sample's INFO, nil after a (re)connect
	prevAt     time.Duration
	prevOwn    uint64
	prevWriter uint64
	opsCarry   float64 // commands over-subtracted so far (<= 0)
	config     source.SaveConfig
	configAt   time.Duration
	haveConfig bool
	spikes     *spikes        // nil when the watcher reads none (NoSpikes)
	lastAnswer time.Duration  // when INFO last answered
	meter      observer.Meter // vkwatch's cost on the server (see observe)
	costAt     time.Duration  // when commandstats was last read
	state      connState      // changed only by move
}

// loop samples until ctx ends: while the server cannot be reached it
// reconnects with backoff, then it takes one INFO a tick. The connection's
// state moves only through s.move (see connState), and each event about
// it is said where the move is news.
func (s *sampling) loop(ctx context.Context, wg *sync.WaitGroup) {
	w := s.w
	tick := time.NewTimer(time.Hour)
	defer tick.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	backoff := backoffMin
	spread := probe.Spread(w.ep.String()) // the probe's own (probe.New)
	for ctx.Err() == nil {
		if !s.state.connected() {
			text, at, err := s.connect(ctx, wg)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				if s.move(dialFailed) {
					s.push(source.Event{Kind: source.EventDisconnected, Err: connectReason(err)})
				}
				if !s.wait(ctx, timer, backoff) {
					return
				}
				backoff = min(2*backoff, backoffMax)
				continue
			}
			if s.move(dialled) {
				id := s.id
				s.push(source.Event{Kind: source.EventConnected, Identity: &id})
			}
			backoff = backoffMin
			s.sample(ctx, text, at, at)
			tick.Reset(sampleWait(probe.Now(), w.Interval(), w.PingInterval(), spread))
		}
		select {
		case <-tick.C:
			// Armed before the INFO: a reply slower than the interval
			// is followed by the next sample at once, as a ticker would.
			tick.Reset(sampleWait(probe.Now(), w.Interval(), w.PingInterval(), spread))
		case <-w.ivl.Changed():
			// The next sample on the new interval's grid: sooner when it
			// is finer (a save coming), later when it is coarser.
			tick.Reset(sampleWait(probe.Now(), w.Interval(), w.PingInterval(), spread))
			continue
		case <-w.answered:
			s.answers()
			continue
		case <-ctx.Done():
			return
		}
		s.takeSample(ctx)
	}
}

// takeSample takes one INFO and turns it into a sample, or says why there
// is none.
func (s *sampling) takeSample(ctx context.Context) {
	w := s.w
	args := infoArgs
	if s.clientsWanted() {
		args = infoWithClients
	}
	ictx, cancel := context.WithTimeout(ctx, infoTimeout)
	sent := w.clock.Offset()
	text, err := w.samplerDo(ictx, args...)
	cancel()
	at := w.clock.Offset()
	switch {
	case ctx.Err() != nil:
		return
	case isTimeout(err):
		// The server is alive but not answering (DEBUG SLEEP, a huge
		// command, SIGSTOP). Keep the connection and everything sampled
		// so far; say how long it has been.
		if s.move(timedOut) {
			silent := (at - s.lastAnswer).Round(100 * time.Millisecond)
			s.push(source.Event{Kind: source.EventDisconnected, Stalled: true, Err: "not answering for " + silent.String()})
		}
		return
	case err != nil:
		if s.move(failed) {
			s.push(source.Event{Kind: source.EventDisconnected, Err: w.cause(err, infoTimeout)})
		}
		return
	}
	if s.move(answered) {
		s.resumed(text)
	}
	s.causeFirst(ctx)
	s.sample(ctx, text, sent, at)
}

// connect (re)connects the sampler. Connected, the sampling starts afresh
// (no ops rate across the gap, the save configuration asked again) and the
// probe runs; text and at are the first INFO and when it answered.
func (s *sampling) connect(ctx context.Context, wg *sync.WaitGroup) (text string, at time.Duration, err error) {
	id, text, at, err := s.w.connect(ctx)
	if err != nil || ctx.Err() != nil {
		return text, at, err
	}
	s.id = id
	s.prev, s.opsCarry = nil, 0
	s.haveConfig = false
	if s.spikes != nil {
		// Counters across the gap bound no spike.
		s.spikes.det.Reset()
	}
	if s.probe == nil {
		w := s.w
		s.probe = probe.New(w.ep, w.tlsCfg, w.PingInterval(), w.cfg.ConnectTimeout, w.cfg.Interval)
		s.probe.CountInto(w.cfg.PingHistogram)
		s.startSpikes(s.probe)
		w.probe.Store(s.probe)
		// A SetPingInterval between the two lines above counts.
		s.probe.SetInterval(w.PingInterval())
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.probe.Run(ctx)
		}()
	}
	return text, at, nil
}

// resumed says the server answers again after a stall, with the identity
// its INFO gives now.
func (s *sampling) resumed(text string) {
	id := s.w.identity(source.ParseInfo(text))
	id.Cluster = s.id.Cluster // asked on connecting only
	s.id = id
	s.push(source.Event{Kind: source.EventConnected, Identity: &id})
}

// wait waits d before the next attempt to connect, passing on command
// answers meanwhile; false when ctx ended first.
func (s *sampling) wait(ctx context.Context, timer *time.Timer, d time.Duration) bool {
	timer.Reset(d)
	for {
		select {
		case <-timer.C:
			return true
		case <-s.w.answered:
			s.answers()
		case <-ctx.Done():
			return false
		}
	}
}

func (s *sampling) push(ev source.Event) {
	ev.Node = s.w.node
	if ev.Offset == 0 {
		ev.Offset = s.w.clock.Offset()
	}
	ev.At = s.w.clock.At(ev.Offset)
	s.q.Push(ev)
}

// emitQueued emits the events q hands over from the sampler and from Do,
// in order, until ctx is done: the one goroutine that calls emit, so a
// sender never waits for it.
func emitQueued(ctx context.Context, q *queue.Queue[source.Event], emit func(source.Event)) {
	var batch []source.Event
	for {
		batch = q.Swap(batch)
		for i := range batch {
			if ctx.Err() != nil {
				return
			}
			emit(batch[i])
			batch[i] = source.Event{}
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-q.Ready():
		case <-ctx.Done():
			return
		}
	}
}
