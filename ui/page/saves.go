package page

import (
	"strconv"
	"time"

	"github.com/vkwatch/vkwatch/source"
	src "github.com/vkwatch/vkwatch/source/report"
)

// saveRow is a save of the table of every save.
type saveRow struct {
	Num                        int
	Server, Colour             string
	Kind, Trigger, Status      string
	Start, Duration, ServerSec cell
	COW, PeakCOW, PeakAt       cell
	PeakFootprint, ForkPause   cell
	OpsBefore, OpsDuring       cell
	P99Before, P99During       cell
	MaxBefore, MaxDuring       cell
	Blocked                    cell
}

func saveRowOf(num int, s *src.Server, sv *src.Save, colour string, epoch time.Time) saveRow {
	// The progress when the peak was seen, as the pane and the reports
	// table say it: n/a where the samples had no progress yet
	// (SaveReport.PeakProgress), not "0 %". A short save's two progress
	// reports are too few for its curve (costs.go), not for this figure:
	// the sample that saw the peak saw the progress with it.
	peakAt := pctCell(sv.PeakProgress())
	blocked := na
	if v, ok := blockedWriters(sv); ok {
		blocked = fcount(v)
	}
	start := cell{epoch.Add(sv.Started).Format("15:04:05"), strconv.FormatFloat(sv.Started.Seconds(), 'f', -1, 64)}
	return saveRow{
		Num: num, Server: clean(s.Addr), Colour: colour,
		Kind: clean(kindText(sv)), Trigger: clean(triggerText(sv.Trigger)), Status: clean(orNA(sv.Status)),
		Start:     start,
		Duration:  secsCell(sv.Observed),
		ServerSec: optSecsCell(sv.ServerSeconds),
		COW:       cowCell(&sv.SaveReport), PeakCOW: bytesCell(sv.PeakCOW), PeakAt: peakAt,
		PeakFootprint: bytesCell(sv.PeakFootprintDelta), ForkPause: pauseCell(sv.ForkPause),
		OpsBefore: opsCell(sv.OpsBefore), OpsDuring: opsCell(sv.OpsDuring),
		P99Before: pingCell(sv.PingBefore, false), P99During: pingCell(sv.PingDuring, false),
		MaxBefore: pingCell(sv.PingBefore, true), MaxDuring: pingCell(sv.PingDuring, true),
		Blocked: blocked,
	}
}

// kindText is a save's kind, which names the method it used (from
// rdb_current_bgsave_type), and the setting where the save's report says
// it forked under bgsave-default-method forkless (MethodNote). The
// setting sampled when the save began (sv.Method) is not compared with the
// kind here: CONFIG GET is read every 2 s, so a save started just after a
// CONFIG SET of the method shows the old setting beside the new method.
func kindText(sv *src.Save) string {
	k := orNA(string(sv.Kind))
	if sv.MethodNote != "" {
		k += " (bgsave-default-method forkless)"
	}
	return k
}

func pingCell(l source.Latency, worst bool) cell {
	if l.Count == 0 && l.InFlight == 0 {
		return na
	}
	if worst {
		return latencyMs(l.Worst())
	}
	return latencyMs(l.P99)
}
