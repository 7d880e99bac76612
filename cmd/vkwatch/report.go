package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source/inert"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/ui/page"
)

func (a *app) reportCommand() *cobra.Command {
	var out, figures string
	var allowTruncated bool
	cmd := &cobra.Command{
		Use:   "report FILE... [-o PAGE.html]",
		Short: "Turn recordings, save reports and bench --json results into one self-contained HTML page",
		Long: `report draws recordings (--record), save reports (--report) and bench results
(bench --json) as one HTML page that needs nothing else: figures are inline
SVG, there is no script, style sheet or font to fetch, and it prints on A4. It
leads with a summary: what was watched and what the saves cost at worst, in
sentences, and one table (per server: saves, worst copy-on-write and footprint
rise, fork pause, PING during a save against before it; for a bench, the
servers side by side as the seed article's table). Then per kind, every server
on one scale: memory (footprint, RSS, used_memory) with each save's span
labelled, ops/s, PING; each save's cost curve against its progress; the table
of every save and run. Several files on one page compare runs. Save reports
hold no samples: their page has the summary, the cost curves and the table of
every save, and no figure over time. --figures DIR also writes each figure as
SVG and PNG.

Without -o the page is named after its input, beside it: night.jsonl.zst makes
night.html, and fork.jsonl with fork.json make fork.html. An existing file of
that name is never replaced: -o names the page to write, and replaces it.`,
		Example: `  vkwatch bench 127.0.0.1:6379 --record fork.jsonl --json > fork.json
  vkwatch report fork.jsonl fork.json            # writes fork.html
  vkwatch save 10.0.0.5:6379 --report saves.json && vkwatch report saves.json
  vkwatch report fork.jsonl forkless.jsonl -o compare.html --figures figs/`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("report: name the files to draw: recordings (--record), save reports (--report) or bench --json output (see vkwatch report --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			replace := out != ""
			if !replace {
				var err error
				if out, err = page.Name(args); err != nil {
					return usageErr("%v", err)
				}
			}
			return a.runReport(args, out, figures, allowTruncated, replace)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the HTML page to write, replacing it if it exists (default: named after the input files, never replacing one)")
	cmd.Flags().StringVar(&figures, "figures", "", "also write every figure as SVG and PNG into this directory")
	cmd.Flags().BoolVar(&allowTruncated, "allow-truncated", false, "report a recording cut short up to its last whole line")
	return cmd
}

// runReport reads every file before it writes anything: bad input is a
// usage error (status 2) and leaves no page behind. Unless replace (-o
// named the page), an existing file of out's name is left as it is and
// refused.
func (a *app) runReport(paths []string, out, figures string, allowTruncated, replace bool) error {
	if _, err := os.Lstat(out); err == nil && !replace {
		return usageErr("%s exists: report replaces a page only when -o names it (-o %s)", out, out)
	}
	ins := make([]src.Input, 0, len(paths))
	for _, p := range paths {
		in, err := src.Load(p, allowTruncated)
		if err != nil {
			return withCode(exitUsage, err)
		}
		ins = append(ins, in)
	}
	r, err := page.Build(ins)
	if err != nil {
		return err
	}
	if err := page.WriteFileAtomic(out, func(w io.Writer) error {
		return r.WriteHTML(w, time.Now(), vkwatchVersion())
	}); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if figures != "" {
		written, err := r.WriteFigures(figures)
		if err != nil {
			return fmt.Errorf("write figures: %w", err)
		}
		fmt.Fprintf(a.stderr, "vkwatch: wrote %d figure files into %s\n", len(written), inert.Text(figures))
	}
	if st, err := os.Stat(out); err == nil {
		fmt.Fprintf(a.stderr, "vkwatch: wrote %s (%d KiB, %d save%s)\n", inert.Text(out), (st.Size()+1023)/1024, len(r.Saves), plural(len(r.Saves)))
	}
	return nil
}
