// Package serverlog reads what a server logs of its own stalls, after a
// PING spike and only then: the newest SLOWLOG entries (a few, keeping
// those above the last id read, never the whole log each time), LATENCY
// LATEST where the latency monitor is on, and INFO latencystats, in one
// round trip. What it returns is package spike's evidence; everything the
// server said is bounded here and made inert where it is shown.
package serverlog

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/spike"
)

// Newest is how many SLOWLOG entries one read asks for: a spike's window
// is a few hundred milliseconds, and the log keeps its newest first.
const Newest = 16

// Bounds on what is kept of a server's text.
const (
	maxName   = 32  // a command or subcommand name
	maxClient = 64  // a client's address or name
	maxStats  = 512 // commands of INFO latencystats
)

// Reader remembers, for one server, the last SLOWLOG id and the LATENCY
// LATEST rows it has read, so that each read keeps only what is new. It is
// not safe for concurrent use: the sampler calls it.
type Reader struct {
	lastID  int64
	haveID  bool
	latency map[string]spike.LatencyEvent
}

// Result is one read, as package spike's Evidence holds it.
type Result struct {
	SlowLog      []spike.SlowEntry
	SlowLogRead  bool
	SlowLogFirst bool
	SlowLogErr   string
	// SlowLogMore says the read's Newest entries were all new: older new
	// ones may not have been read.
	SlowLogMore bool
	Latency     []spike.LatencyEvent
	LatencyRead bool
	LatencyErr  string
	Stats       map[string]spike.CommandStats
}

// Into copies r into e.
func (r Result) Into(e *spike.Evidence) {
	e.SlowLog, e.SlowLogRead, e.SlowLogFirst, e.SlowLogErr = r.SlowLog, r.SlowLogRead, r.SlowLogFirst, r.SlowLogErr
	e.Latency, e.LatencyRead, e.LatencyErr = r.Latency, r.LatencyRead, r.LatencyErr
	e.Stats = r.Stats
}

// Read asks c, pipelined in one round trip, for SLOWLOG GET Newest, INFO
// latencystats and, with latency (latency-monitor-threshold above 0),
// LATENCY LATEST. A command the server refuses (NOPERM, unknown on an old
// server) leaves its part empty with the server's words in its Err; an
// error of the transport is returned.
func (rd *Reader) Read(ctx context.Context, c redis.Cmdable, latency bool) (Result, error) {
	var (
		slow  *redis.SlowLogCmd
		lat   *redis.LatencyCmd
		stats *redis.StringCmd
	)
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		slow = p.SlowLogGet(ctx, Newest)
		stats = p.Info(ctx, "latencystats")
		if latency {
			lat = p.Latency(ctx)
		}
		return nil
	})
	var rerr redis.Error
	if err != nil && !errors.As(err, &rerr) {
		return Result{}, err
	}
	var res Result
	rd.slowlog(slow, &res)
	if lat != nil {
		rd.latencyLatest(lat, &res)
	}
	if text, err := stats.Result(); err == nil {
		res.Stats = ParseLatencyStats(text)
	}
	return res, nil
}

func (rd *Reader) slowlog(cmd *redis.SlowLogCmd, res *Result) {
	entries, err := cmd.Result()
	if err != nil {
		res.SlowLogErr = oneLine(err.Error())
		return
	}
	res.SlowLogRead = true
	newest := int64(-1)
	for _, e := range entries {
		newest = max(newest, e.ID)
	}
	if rd.haveID && newest >= 0 && newest < rd.lastID {
		// The ids went back: the server restarted (its ids start at 0).
		rd.haveID = false
	}
	res.SlowLogFirst = !rd.haveID
	for _, e := range entries {
		if rd.haveID && e.ID <= rd.lastID {
			continue
		}
		res.SlowLog = append(res.SlowLog, spike.SlowEntry{
			ID: e.ID, Time: e.Time.Unix(), Duration: e.Duration,
			Command: CommandName(e.Args), Client: bound(e.ClientAddr, maxClient), ClientName: bound(e.ClientName, maxClient),
		})
	}
	res.SlowLogMore = rd.haveID && len(entries) == Newest && len(res.SlowLog) == Newest
	switch {
	case newest >= 0 && res.SlowLogFirst:
		rd.lastID, rd.haveID = newest, true
	case newest >= 0:
		rd.lastID = max(rd.lastID, newest)
	case !rd.haveID:
		// An empty log: every entry from now on is new.
		rd.lastID, rd.haveID = -1, true
	}
}

func (rd *Reader) latencyLatest(cmd *redis.LatencyCmd, res *Result) {
	rows, err := cmd.Result()
	if err != nil {
		res.LatencyErr = oneLine(err.Error())
		return
	}
	res.LatencyRead = true
	first := rd.latency == nil
	if first {
		rd.latency = map[string]spike.LatencyEvent{}
	}
	for _, r := range rows {
		name := bound(r.Name, maxName)
		ev := spike.LatencyEvent{Event: name, Time: r.Time.Unix(), Latest: r.Latest, Max: r.Max}
		if old, ok := rd.latency[name]; ok && old.Time == ev.Time && old.Latest == ev.Latest {
			continue // the row read last time
		}
		if _, known := rd.latency[name]; known || len(rd.latency) < maxStats {
			rd.latency[name] = ev
		}
		res.Latency = append(res.Latency, ev)
	}
}

// containers are the commands whose first argument is a subcommand, named
// with it ("DEBUG SLEEP", "CONFIG GET").
var containers = map[string]bool{
	"ACL": true, "CLIENT": true, "CLUSTER": true, "COMMAND": true, "CONFIG": true, "DEBUG": true,
	"FUNCTION": true, "LATENCY": true, "MEMORY": true, "MODULE": true, "OBJECT": true, "PUBSUB": true,
	"SCRIPT": true, "SLOWLOG": true, "XGROUP": true, "XINFO": true,
}

// CommandName is a SLOWLOG entry's command, its name upper-cased with its
// subcommand for the commands that have them, never an argument beyond:
// arguments may hold values. A name that is no command's (anything but
// letters, digits, '-', '_', '|' and '.', or too long) shows as "?".
func CommandName(args []string) string {
	if len(args) == 0 {
		return "?"
	}
	name := word(args[0])
	if containers[name] && len(args) > 1 && word(args[1]) != "?" {
		return name + " " + word(args[1])
	}
	return name
}

func word(s string) string {
	if s == "" || len(s) > maxName {
		return "?"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '|' || c == '.') {
			return "?"
		}
	}
	return strings.ToUpper(s)
}

// bound cuts a server's text to n bytes.
func bound(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return bound(s, 256)
}

// ParseLatencyStats reads INFO latencystats:
// "latency_percentiles_usec_debug:p50=50069.503,p99=50069.503,p99.9=50069.503"
// by command name (lower case, "config|get" for a subcommand). Lines it
// cannot read are left out; at most maxStats commands are kept.
func ParseLatencyStats(text string) map[string]spike.CommandStats {
	out := map[string]spike.CommandStats{}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		rest, ok := strings.CutPrefix(line, "latency_percentiles_usec_")
		if !ok {
			continue
		}
		name, vals, ok := strings.Cut(rest, ":")
		if !ok || word(name) == "?" || len(out) >= maxStats {
			continue
		}
		var st spike.CommandStats
		for kv := range strings.SplitSeq(vals, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1e12 {
				continue
			}
			d := time.Duration(f * float64(time.Microsecond))
			switch k {
			case "p50":
				st.P50 = d
			case "p99":
				st.P99 = d
			case "p99.9":
				st.P999 = d
			}
		}
		out[strings.ToLower(name)] = st
	}
	return out
}
