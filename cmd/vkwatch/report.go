package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vkwatch/vkwatch/source/inert"
	src "github.com/vkwatch/vkwatch/source/report"
	"github.com/vkwatch/vkwatch/ui/report"
)

func (a *app) reportCommand() *cobra.Command {
	var out, figures string
	var allowTruncated bool
	cmd := &cobra.Command{
		Use:   "report FILE... -o report.html",
		Short: "Turn recordings and bench --json results into one self-contained HTML page",
		Long: `report draws recordings (--record) and bench results (bench --json) as one HTML
page that needs nothing else: figures are inline SVG, there is no script, style
sheet or font to fetch, and it prints on A4. It leads with a summary: what was
watched and what the saves cost at worst, in sentences, and one table (per
server: saves, worst copy-on-write and footprint rise, fork pause, PING during
a save against before it; for a bench, the servers side by side as the seed
article's table). Then per kind, every server on one scale: memory (footprint,
RSS, used_memory) with each save's span labelled, ops/s, PING; each save's cost
curve against its progress; the table of every save and run. Several files on
one page compare runs. --figures DIR also writes each figure as SVG and PNG.`,
		Example: `  vkwatch bench 127.0.0.1:6379 --record fork.jsonl --json > fork.json
  vkwatch report fork.jsonl fork.json -o report.html
  vkwatch report fork.jsonl forkless.jsonl -o compare.html --figures figs/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageErr("name the page to write with -o FILE (e.g. -o report.html)")
			}
			return a.runReport(args, out, figures, allowTruncated)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the HTML page to write")
	cmd.Flags().StringVar(&figures, "figures", "", "also write every figure as SVG and PNG into this directory")
	cmd.Flags().BoolVar(&allowTruncated, "allow-truncated", false, "report a recording cut short up to its last whole line")
	return cmd
}

// runReport reads every file before it writes anything: bad input is a
// usage error (status 2) and leaves no page behind.
func (a *app) runReport(paths []string, out, figures string, allowTruncated bool) error {
	ins := make([]src.Input, 0, len(paths))
	for _, p := range paths {
		in, err := src.Load(p, allowTruncated)
		if err != nil {
			return withCode(exitUsage, err)
		}
		ins = append(ins, in)
	}
	r, err := report.Build(ins)
	if err != nil {
		return err
	}
	if err := report.WriteFileAtomic(out, func(w io.Writer) error {
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
		fmt.Fprintf(a.stderr, "vkwatch: wrote %s (%d KiB, %d saves)\n", inert.Text(out), (st.Size()+1023)/1024, len(r.Saves))
	}
	return nil
}
