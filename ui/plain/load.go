package plain

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"

	"github.com/vkwatch/vkwatch/source/inert"
)

// PlainEvery is how often progress that a terminal would see redrawn in
// place is written as a line of its own where it goes to a file or a pipe.
const PlainEvery = 10 * time.Second

// Preload tells a preload's progress: on a terminal, a bar and the rate
// redrawn in place; to a file or a pipe, a plain line every PlainEvery
// (no bar, no \r).
type Preload struct {
	w      io.Writer
	tty    bool
	bar    progress.Model
	start  time.Time
	last   string
	lastAt time.Time
}

// NewPreload starts telling a preload's progress to w, a terminal when tty.
func NewPreload(w io.Writer, tty bool) *Preload {
	now := time.Now()
	return &Preload{w: w, tty: tty, bar: progress.New(progress.WithWidth(40), progress.WithoutPercentage()), start: now, lastAt: now}
}

// Update is load.Preload's progress: done of total keys are written.
func (p *Preload) Update(done, total int) {
	now := time.Now()
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(done) / el
	}
	pct := 100 * float64(done) / float64(total)
	if !p.tty {
		if now.Sub(p.lastAt) >= PlainEvery {
			fmt.Fprintf(p.w, "preload %.0f%% %d/%d keys  %.0f keys/s\n", pct, done, total, rate)
			p.lastAt = now
		}
		return
	}
	line := fmt.Sprintf("\rpreload %s %3.0f%% %d/%d keys  %.0f keys/s", p.bar.ViewAs(float64(done)/float64(total)), pct, done, total, rate)
	if line != p.last {
		fmt.Fprint(p.w, line)
		p.last = line
	}
}

// End ends the line redrawn in place, and says how long the preload took.
func (p *Preload) End() time.Duration {
	if p.tty {
		fmt.Fprintln(p.w)
	}
	return time.Since(p.start)
}

// Counts are what a write load has done so far (source/load's Writers).
type Counts interface {
	Ops() uint64
	Misses() uint64
	Errors() uint64
	LastError() error
}

// Writers prints the writers' SET rate to w until ctx ends, then what
// they did in all: on a terminal (tty) once a second, on one line
// rewritten in place; to a file or a pipe, a plain line every PlainEvery
// (no \r).
func Writers(ctx context.Context, w io.Writer, tty bool, c Counts) {
	every, cr, end := time.Second, "\r", "\n"
	if !tty {
		every, cr, end = PlainEvery, "", ""
	}
	t := time.NewTicker(every)
	defer t.Stop()
	prev, prevT := c.Ops(), time.Now()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(w, "%sstopped after %d SETs (%d errors)\n", end, c.Ops(), c.Errors())
			return
		case now := <-t.C:
			ops := c.Ops()
			msg := fmt.Sprintf("%s%8.0f SET/s  total %d", cr, float64(ops-prev)/now.Sub(prevT).Seconds(), ops)
			if m := c.Misses(); m > 0 {
				msg += fmt.Sprintf("  %d found no key", m)
			}
			if e := c.LastError(); e != nil {
				msg += fmt.Sprintf("  errors %d (last: %s)", c.Errors(), inert.Text(e.Error()))
			}
			if !tty {
				msg = strings.TrimLeft(msg, " ") + "\n"
			}
			fmt.Fprint(w, msg)
			prev, prevT = ops, now
		}
	}
}
