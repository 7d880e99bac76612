package plain

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/record"
)

// Recording lists a recording (path, summarized as s): its servers, span
// and saves. Text from
// the file is made inert first.
func Recording(w io.Writer, path string, s *record.Summary) {
	epoch := s.Header.Epoch
	clock := func(d time.Duration) string { return epoch.Add(d).Local().Format("2006-01-02 15:04:05") }
	fmt.Fprintf(w, "%s: format version %d, by vkwatch %s\n", inert.Text(path), s.Header.Version, inert.Text(s.Header.VKWatch))
	if iv := s.Header.Settings["interval"]; iv != "" {
		fmt.Fprintf(w, "interval %s\n", inert.Text(iv))
	}
	fmt.Fprintf(w, "span: %s .. %s (%s), %d events, %d samples\n", clock(s.First), clock(s.Last), (s.Last - s.First).Round(time.Second), s.Events, s.Samples)
	if s.Truncated {
		fmt.Fprintf(w, "cut short: %s\n", inert.Text(s.Why))
	}
	fmt.Fprintf(w, "servers (%d):\n", len(s.Servers))
	for _, si := range s.Servers {
		id := ""
		if si.Identity != nil {
			id = fmt.Sprintf("  %s %s %s", inert.Text(si.Identity.ServerName), inert.Text(si.Identity.Version), inert.Text(si.Identity.Role))
		}
		node := ""
		if string(si.Node) != si.Addr {
			node = "  node " + inert.Text(string(si.Node))
		}
		fmt.Fprintf(w, "  %s%s%s\n", inert.Text(si.Addr), id, node)
	}
	fmt.Fprintf(w, "saves (%d):\n", len(s.Saves))
	if len(s.Saves) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tstarted\tserver\tkind\ttrigger\tstatus\ttook\tpeak cow\tfootprint +\tfork pause")
	for i, r := range s.Saves {
		trig := string(r.Trigger.Kind)
		if r.Trigger.Detail != "" {
			trig += " (" + r.Trigger.Detail + ")"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, clock(r.Started), inert.Text(r.Addr), inert.Text(string(r.Kind)),
			inert.Text(trig), inert.Text(r.Status), r.Observed.Round(time.Millisecond), optBytes(r.PeakCOW), optBytes(r.PeakFootprintDelta), optDur(r.ForkPause))
	}
	tw.Flush()
}

func optBytes(o source.Opt[int64]) string {
	if !o.OK {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(o.V)/(1<<20))
}

func optDur(o source.Opt[time.Duration]) string {
	if !o.OK {
		return "n/a"
	}
	return o.V.Round(time.Microsecond).String()
}
