package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/ui"
	"github.com/vkwatch/vkwatch/ui/replay"
	"github.com/vkwatch/vkwatch/ui/tty"
)

func (a *app) replayCommand() *cobra.Command {
	var speed float64
	var from, to string
	var ascii asciiFlag
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Replay a recording in the monitor (space pause, arrows seek)",
		Long: `replay drives the monitor from a recording made with --record: space pauses,
left/right seek 10 s, --speed sets the pace. --from and --to replay only a
window (03:00 is a clock time, +90m an offset from the start). A recording
cut short by a crash replays up to its last whole line.`,
		Args: oneFile("replay", "a recording made with --record"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if speed <= 0 {
				return usageErr("--speed must be positive")
			}
			return a.runReplay(cmd.Context(), args[0], speed, from, to, ascii.screen(a.getenv))
		},
	}
	cmd.Flags().Float64Var(&speed, "speed", 1, "playback speed (2 = twice as fast)")
	cmd.Flags().StringVar(&from, "from", "", "replay from this time (03:00, +90m, RFC 3339)")
	cmd.Flags().StringVar(&to, "to", "", "replay up to this time")
	registerASCII(cmd.Flags(), &ascii)
	return cmd
}

func (a *app) runReplay(ctx context.Context, path string, speed float64, from, to string, ascii bool) error {
	rf, err := record.OpenFile(path)
	if err != nil {
		return withCode(exitUsage, err) // as recording and report: a file that is no recording is bad input
	}
	defer rf.Close()
	win := record.Window{From: rf.Start, To: rf.End}
	if from != "" || to != "" {
		if win, err = parseWindow(from, to, &record.Summary{Header: rf.Header, First: rf.Start, Last: rf.End}); err != nil {
			return usageErr("%v", err)
		}
		win.From, win.To = max(win.From, rf.Start), min(win.To, rf.End)
		if win.To < win.From {
			return usageErr("%s holds no event between --from and --to", path)
		}
	}
	if rf.Truncated {
		fmt.Fprintf(a.stderr, "vkwatch: %s: %s; replaying up to its last whole line\n", inert.Text(path), inert.Text(rf.Why))
	}
	if !a.isTTY() {
		return withCode(exitNoTTY, errors.New("standard output is not a terminal: replay needs one"))
	}
	m, err := replay.OfFile(ui.Config{
		Banner:   fmt.Sprintf("replay of %s (recorded %s)", path, rf.Header.Epoch.Format("2006-01-02 15:04:05")),
		ReadOnly: true,
		ASCII:    ascii,
	}, rf, win, replay.Options{
		Speed: speed,
		Epoch: rf.Header.Epoch,
		ParseTime: func(s string) (time.Duration, error) {
			return source.ParseWhen(s, rf.Header.Epoch, win.From)
		},
	})
	if err != nil {
		return err
	}
	return tty.RunUntil(ctx, a.stdin, a.stdout, m, nil)
}
