package watch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source"
)

// Do sends a command (e.g. "BGSAVE", "BGREWRITEAOF") on a connection of
// its own (neither the probe's nor the sampler's, so it never delays
// either), bounded by CommandTimeout. It returns the result, with the
// server's own error text verbatim in Err, and also emits it as an
// EventCommand through Run's emit when Run is running: the sampler's
// goroutine emits it (at once, or after the INFO call in flight), having
// shown it to the save tracker first.
func (w *Watcher) Do(ctx context.Context, args ...string) source.CommandResult {
	sent, _ := w.clock.Now()
	res := source.CommandResult{Command: commandText(args), Sent: sent}
	starts := mayStartSave(args)
	if starts {
		w.starting.Add(1)
		w.saveSent.Store(max(int64(sent), 1))
	}
	switch {
	case len(args) == 0:
		res.Err = "empty command"
	case w.optsErr != nil:
		res.Err = w.optsErr.Error()
	default:
		cctx, cancel := context.WithTimeout(ctx, w.cfg.CommandTimeout)
		a := make([]any, len(args))
		for i, v := range args {
			a[i] = v
		}
		var val any
		err := error(redis.ErrClosed)
		if c := w.client(&w.cmds, w.cfg.CommandTimeout); c != nil {
			cmd := redis.NewCmd(cctx, a...)
			_ = c.Process(context.WithValue(cctx, userCmd{}, cmd), cmd)
			val, err = cmd.Result()
			if transportError(err) {
				w.drop(&w.cmds, c)
			}
		}
		cancel()
		var rerr redis.Error
		switch {
		case err == nil:
			res.Reply = replyText(val)
		case errors.As(err, &rerr):
			res.Err = rerr.Error()
		case errors.Is(err, redis.Nil):
			res.Reply = "(nil)"
		case isTimeout(err):
			// Sent and not answered: a stalled server may still run it
			// when it wakes up (a BGSAVE then shows as a save).
			res.Err = "timed out after " + w.cfg.CommandTimeout.String() + "; the server may still run it when it answers"
		default:
			res.Err = w.cause(err, w.cfg.CommandTimeout)
		}
	}
	res.Done = w.clock.Offset()
	if setsConfig(args) {
		w.configStale.Store(true)
	}
	w.answersMu.Lock()
	running := w.running
	if running {
		w.answers = append(w.answers, res)
	}
	w.answersMu.Unlock()
	if starts {
		// After the answer is queued and before the wake-up, so that
		// causeFirst, woken and seeing none in flight, finds it.
		w.starting.Add(-1)
	}
	if running {
		select {
		case w.answered <- struct{}{}:
		default:
		}
	}
	return res
}

// setsConfig reports whether a command sent with Do may change a setting
// the samples carry (CONFIG SET).
func setsConfig(args []string) bool {
	return len(args) >= 2 && strings.EqualFold(args[0], "CONFIG") && strings.EqualFold(args[1], "SET")
}

// mayStartSave reports whether a command sent with Do may start a save
// (BGSAVE CANCEL ends one and is not counted).
func mayStartSave(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch strings.ToUpper(args[0]) {
	case "BGSAVE":
		return len(args) == 1 || !strings.EqualFold(args[1], "CANCEL")
	case "BGREWRITEAOF":
		return true
	}
	return false
}

// takeAnswers returns and forgets the results of Do not yet taken.
func (w *Watcher) takeAnswers() []source.CommandResult {
	w.answersMu.Lock()
	defer w.answersMu.Unlock()
	a := w.answers
	w.answers = nil
	return a
}

// causeFirst hands the save tracker the answers of vkwatch's own commands
// before the sample that may show their effect. A BGSAVE forks before it
// answers, on a connection of its own: the sampler's INFO can show the
// save running, or already over, before Do has queued the answer. Taken
// after the sample, the answer would come too late for a save that ran
// whole between two samples, and vkwatch's own save would be reported as
// another client's. So a save command still in flight is waited for, up to
// causeWait (its answer follows the fork at once; a server too slow for
// that is stalled, and the sample goes on without it).
func (s *sampling) causeFirst(ctx context.Context) {
	if s.w.starting.Load() > 0 {
		timer := time.NewTimer(causeWait)
		defer timer.Stop()
		for s.w.starting.Load() > 0 {
			select {
			case <-s.w.answered:
			case <-timer.C:
				s.answers()
				return
			case <-ctx.Done():
				return
			}
		}
	}
	s.answers()
}

// causeWait bounds how long a sample waits for the answer of a save
// command in flight (see causeFirst).
const causeWait = time.Second

// answers hands the command results that arrived since the last call to
// the save tracker and on as EventCommand, from the sampler's goroutine, so
// that the tracker and a recording see commands and samples in one order.
func (s *sampling) answers() {
	for _, r := range s.w.takeAnswers() {
		s.tracker.ObserveCommand(&r)
		s.push(source.Event{Kind: source.EventCommand, Offset: r.Done, Command: &r})
	}
}

// commandText is the command as shown to the user; an AUTH's arguments
// are hidden.
func commandText(args []string) string {
	if len(args) > 0 && strings.EqualFold(args[0], "AUTH") {
		return args[0] + " xxxxx"
	}
	return strings.Join(args, " ")
}

func replyText(v any) string {
	switch r := v.(type) {
	case string:
		return r
	case int64:
		return strconv.FormatInt(r, 10)
	case nil:
		return "(nil)"
	}
	return fmt.Sprint(v)
}
