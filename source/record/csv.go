package record

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/inert"
)

// csvColumns is the fixed column set of a CSV recording. Sample rows fill
// the measurement columns; other events fill t, at, server, kind, save_kind
// and trigger where they apply, and detail. Absent values are empty cells,
// never 0.
//
// cow and footprint are Sample.COW and Sample.Footprint, each with the
// instrument it was read from in the next column (proc or info);
// current_cow_size is INFO's own figure. (In CSV files without a cow_from
// column, written before the instruments existed, cow held
// current_cow_size.)
var csvColumns = []string{
	"t", "at", "node", "kind",
	"used_memory", "rss", "maxmemory", "proc_rss", "proc_pss",
	"footprint", "footprint_from", "cow", "cow_from", "current_cow_size", "child_private_dirty",
	"cgroup", "cgroup_usage", "cgroup_limit",
	"ops", "inst_ops", "writer_ops",
	"ping_count", "ping_min_us", "ping_p50_us", "ping_p99_us", "ping_max_us", "ping_inflight_us",
	"save_kind", "trigger", "trigger_detail", "save_elapsed_s", "keys_processed", "keys_total", "eta_s",
	"rdb_bgsave_in_progress", "aof_rewrite_in_progress", "rdb_last_cow_size", "rdb_last_bgsave_time_sec",
	"detail",
}

// csvText are the columns that hold text (the rest hold numbers or
// times). A text cell a spreadsheet would run as a formula (a replica or a
// node whose address begins with =, an error reply beginning with -) is
// neutralised by inert.CSV; a number cell is left alone, so a negative
// number stays a number.
var csvText = map[string]bool{
	"node": true, "kind": true, "footprint_from": true, "cow_from": true, "cgroup": true,
	"save_kind": true, "trigger": true, "trigger_detail": true, "detail": true,
}

// csvLine is row as one CSV line, without its newline.
func csvLine(row []string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(row) // into memory: no error
	w.Flush()
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

func optInt(o source.Opt[int64]) string {
	if !o.OK {
		return ""
	}
	return strconv.FormatInt(o.V, 10)
}

func optFloat(o source.Opt[float64]) string {
	if !o.OK {
		return ""
	}
	return strconv.FormatFloat(o.V, 'f', -1, 64)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }
func micros(d time.Duration) string  { return strconv.FormatFloat(float64(d)/1e3, 'f', -1, 64) }

// csvSet fills the cell of column col of a row.
type csvSet func(col, v string)

func csvRow(ev source.Event, epoch time.Time) []string {
	row := make([]string, len(csvColumns))
	set := func(col, v string) {
		for i, c := range csvColumns {
			if c == col {
				row[i] = v
				return
			}
		}
		panic("record: no CSV column " + col)
	}
	set("t", seconds(ev.Offset))
	set("at", epoch.Add(ev.Offset).Format(time.RFC3339Nano))
	set("node", string(ev.Node))
	set("kind", ev.Kind.String())
	eventCells(set, ev)
	if ev.Kind != source.EventSample && ev.Err != "" && row[len(row)-1] == "" {
		set("detail", ev.Err)
	}
	for i, c := range csvColumns {
		if csvText[c] {
			row[i] = inert.CSV(row[i])
		}
	}
	return row
}

// eventCells fills the cells of what ev says, by its kind.
func eventCells(set csvSet, ev source.Event) {
	switch ev.Kind {
	case source.EventSample:
		if s := ev.Sample; s != nil {
			sampleCells(set, s)
		}
	case source.EventConnected:
		if id := ev.Identity; id != nil {
			name := id.ServerName
			if name == "" {
				name = "redis"
			}
			set("detail", fmt.Sprintf("%s %s %s role=%s pid=%s", id.Addr, name, id.Version, id.Role, optInt(id.ProcessID)))
		}
	case source.EventDisconnected:
		set("detail", ev.Err)
	case source.EventCommand:
		if c := ev.Command; c != nil {
			d := c.Command + " -> "
			if c.OK() {
				d += c.Reply
			} else {
				d += "error: " + c.Err
			}
			set("detail", d)
		}
	case source.EventSaveStarted:
		if s := ev.Sample; s != nil && s.Save != nil {
			set("save_kind", string(s.Save.Kind))
			set("trigger", string(s.Save.Trigger.Kind))
			set("trigger_detail", s.Save.Trigger.Detail)
			set("keys_total", optInt(s.Save.Total))
		}
	case source.EventSaveEnded:
		if r := ev.Report; r != nil {
			set("save_kind", string(r.Kind))
			set("trigger", string(r.Trigger.Kind))
			set("trigger_detail", r.Trigger.Detail)
			set("detail", reportDetail(*r))
		}
	case source.EventTopology:
		if t := ev.Topology; t != nil {
			set("detail", topologyDetail(t))
		}
	case source.EventSpike:
		if sp := ev.Spike; sp != nil {
			set("detail", sp.Line())
		}
	}
}

// sampleCells fills the measurement columns of a sample.
func sampleCells(set csvSet, s *source.Sample) {
	set("used_memory", optInt(s.Info.UsedMemory))
	set("rss", optInt(s.Info.RSS))
	set("maxmemory", optInt(s.Info.MaxMemory))
	set("proc_rss", optInt(s.Proc.RSS))
	set("proc_pss", optInt(s.Proc.PSS))
	set("footprint", optInt(s.Footprint))
	set("footprint_from", string(s.FootprintFrom))
	set("cow", optInt(s.COW))
	set("cow_from", string(s.COWFrom))
	set("current_cow_size", optInt(s.Info.CurrentCOW))
	set("child_private_dirty", optInt(s.Proc.ChildPrivateDirty))
	set("cgroup", s.Proc.Cgroup)
	set("cgroup_usage", optInt(s.Proc.CgroupUsage))
	set("cgroup_limit", optInt(s.Proc.CgroupLimit))
	set("ops", optFloat(s.OpsPerSec))
	set("inst_ops", optInt(s.Info.InstOps))
	set("writer_ops", optFloat(s.WriterOpsPerSec))
	pingCells(set, s.Ping)
	if p := s.Save; p != nil {
		set("save_kind", string(p.Kind))
		set("trigger", string(p.Trigger.Kind))
		set("trigger_detail", p.Trigger.Detail)
		set("save_elapsed_s", seconds(p.Elapsed))
		set("keys_processed", optInt(p.Processed))
		set("keys_total", optInt(p.Total))
		if p.ETA.OK {
			set("eta_s", seconds(p.ETA.V))
		}
	}
	set("rdb_bgsave_in_progress", optInt(s.Info.RDBInProgress))
	set("aof_rewrite_in_progress", optInt(s.Info.AOFRewriteInProgress))
	set("rdb_last_cow_size", optInt(s.Info.RDBLastCOW))
	set("rdb_last_bgsave_time_sec", optInt(s.Info.RDBLastTime))
}

// pingCells fills the PING columns: no latencies when none was answered.
func pingCells(set csvSet, p source.Latency) {
	if p.Count > 0 {
		set("ping_count", strconv.FormatInt(p.Count, 10))
		set("ping_min_us", micros(p.Min))
		set("ping_p50_us", micros(p.P50))
		set("ping_p99_us", micros(p.P99))
		set("ping_max_us", micros(p.Max))
	} else {
		set("ping_count", "0")
	}
	if p.InFlight > 0 {
		set("ping_inflight_us", micros(p.InFlight))
	}
}

// reportDetail summarises a save report in one cell, absent values as n/a.
func reportDetail(r source.SaveReport) string {
	na := func(s string) string {
		if s == "" {
			return "n/a"
		}
		return s
	}
	parts := []string{
		"status=" + na(r.Status),
		"observed_s=" + seconds(r.Observed),
		"server_seconds=" + na(optInt(r.ServerSeconds)),
		"cow=" + na(optInt(r.COW)),
		"peak_live_cow=" + na(optInt(r.PeakLiveCOW)),
		"peak_cow=" + na(optInt(r.PeakCOW)),
		"peak_at_progress=" + na(optFloat(r.PeakAtProgress)),
		"peak_footprint_delta=" + na(optInt(r.PeakFootprintDelta)),
		"peak_used_delta=" + na(optInt(r.PeakUsedDelta)),
		"peak_rss_delta=" + na(optInt(r.PeakRSSDelta)),
		"writer_ops_before=" + na(optFloat(r.WriterOpsBefore)),
		"writer_ops_during=" + na(optFloat(r.WriterOpsDuring)),
		"ping_max_during_us=" + micros(r.PingDuring.Max),
	}
	if r.ForkPause.OK {
		parts = append(parts, "fork_pause_us="+micros(r.ForkPause.V))
	} else {
		parts = append(parts, "fork_pause_us=n/a")
	}
	return strings.Join(parts, " ")
}

// topologyDetail summarises a topology change in one cell.
func topologyDetail(t *source.Topology) string {
	parts := []string{
		"nodes=" + strconv.Itoa(len(t.Nodes())),
		"shards=" + strconv.Itoa(len(t.Shards)),
		"ping_interval_s=" + seconds(t.PingInterval),
	}
	for _, c := range t.Changes {
		p := string(c.Kind) + ":" + c.Addr
		if c.From != "" || c.To != "" {
			p += ":" + c.From + "->" + c.To
		}
		parts = append(parts, p)
	}
	if t.Err != "" {
		parts = append(parts, "err="+strconv.Quote(t.Err))
	}
	return strings.Join(parts, " ")
}
