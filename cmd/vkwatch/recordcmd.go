package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/record"
	"github.com/vkwatch/vkwatch/ui/plain"
)

// recordingCommand is `vkwatch recording FILE`: what a recording holds,
// and a window or one save of it cut out as a recording of its own.
func (a *app) recordingCommand() *cobra.Command {
	var from, to, out string
	var save int
	var margin time.Duration
	cmd := &cobra.Command{
		Use:   "recording FILE [--from T] [--to T | --save N] [-o CUT]",
		Short: "List what a recording holds (servers, span, saves); cut a window or one save out of it",
		Long: `recording reads a recording made with --record (plain, .zst or .gz) and lists
its servers, its span and every save with its time, kind, trigger and cost.
With -o CUT it writes a recording of its own: the window --from .. --to, or
save number N (as listed) with --margin either side, to share just that save.
CUT is compressed by its name (.zst, .gz) and is never overwritten.
A time T is a clock time (03:00, 03:00:30; local time, the first such time
in the recording), an offset from its start (+90m), or RFC 3339.`,
		Example: `  vkwatch recording night.jsonl.zst
  vkwatch recording night.jsonl.zst --save 3 -o save3.jsonl.zst
  vkwatch recording night.jsonl.zst --from 03:00 --to 03:20 -o 0300.jsonl.zst`,
		Args: oneFile("recording", "a recording made with --record"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("margin") && save == 0 {
				return usageErr("--margin goes with --save N: --from and --to cut the window as given")
			}
			if save != 0 && (from != "" || to != "") {
				return usageErr("--save N cuts one save: give it or --from/--to, not both")
			}
			if out == "" && (save != 0 || from != "" || to != "") {
				return usageErr("name the recording to write with -o FILE (e.g. -o cut.jsonl.zst)")
			}
			if margin < 0 {
				return usageErr("--margin must not be negative")
			}
			return a.runRecording(args[0], from, to, save, margin, out)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "start of the window to cut (03:00, +90m, RFC 3339)")
	cmd.Flags().StringVar(&to, "to", "", "end of the window to cut")
	cmd.Flags().IntVar(&save, "save", 0, "cut save number N of the list, with --margin either side")
	cmd.Flags().DurationVar(&margin, "margin", 30*time.Second, "with --save: how much before and after the save to keep (at least 6s keeps its report's before figures)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the recording to write (FILE.zst or FILE.gz compressed)")
	return cmd
}

// oneFile is the argument check of a command that reads one file, what.
func oneFile(cmd, what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageErr("%s reads one file, %s (got %d; see vkwatch %s --help)", cmd, what, len(args), cmd)
		}
		return nil
	}
}

func (a *app) runRecording(path, from, to string, save int, margin time.Duration, out string) error {
	sum, err := summarizeFile(path)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if out == "" {
		plain.Recording(a.stdout, path, sum)
		return nil
	}
	var win record.Window
	if save != 0 {
		if save < 1 || save > len(sum.Saves) {
			return usageErr("--save %d: %s lists %d save(s)", save, path, len(sum.Saves))
		}
		win = record.SaveWindow(sum.Saves[save-1], margin)
	} else {
		win, err = parseWindow(from, to, sum)
		if err != nil {
			return usageErr("%v", err)
		}
	}
	n, err := cutFile(path, out, win)
	if err != nil {
		return err
	}
	// Said as report says what it wrote: the file, its size, what it holds.
	clock := func(d time.Duration) string { return sum.Header.Epoch.Add(d).Local().Format("15:04:05") }
	size := int64(0)
	if st, err := os.Stat(out); err == nil {
		size = st.Size()
	}
	fmt.Fprintf(a.stderr, "vkwatch: wrote %s (%d KiB, %d events, %s – %s)\n", inert.Text(out), (size+1023)/1024, n, clock(max(win.From, sum.First)), clock(min(win.To, sum.Last)))
	return nil
}

func summarizeFile(path string) (*record.Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := record.Summarize(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// cutFile writes win of path to out, which must not exist yet: a cut
// never replaces a file. A failed cut leaves nothing behind. It returns
// how many events the cut holds.
func cutFile(path, out string, win record.Window) (int, error) {
	in, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return 0, usageErr("%s exists: a cut never overwrites a file", out)
		}
		return 0, err
	}
	n, err := record.Cut(in, f, record.CompressionFor(out), win)
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(out)
		return 0, fmt.Errorf("cutting %s: %w", path, err)
	}
	if n == 0 {
		os.Remove(out)
		return 0, usageErr("the window holds no event of %s", path)
	}
	return n, nil
}

// parseWindow reads --from and --to against the recording's span; either
// left out is the recording's start or end.
func parseWindow(from, to string, s *record.Summary) (record.Window, error) {
	win := record.Window{From: s.First, To: s.Last}
	var err error
	if from != "" {
		if win.From, err = source.ParseWhen(from, s.Header.Epoch, s.First); err != nil {
			return win, fmt.Errorf("--from %q: %w", from, err)
		}
	}
	if to != "" {
		if win.To, err = source.ParseWhen(to, s.Header.Epoch, win.From); err != nil {
			return win, fmt.Errorf("--to %q: %w", to, err)
		}
	}
	if win.To < win.From {
		return win, fmt.Errorf("--to is before --from")
	}
	return win, nil
}
