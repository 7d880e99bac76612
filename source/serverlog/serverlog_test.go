package serverlog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
	"github.com/vkwatch/vkwatch/source/spike"
)

func start(t *testing.T, args ...string) *redis.Client {
	t.Helper()
	srv := servertest.Start(t, server.Options{Args: args})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func read(t *testing.T, rd *Reader, c *redis.Client, latency bool) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := rd.Read(ctx, c, latency)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestReadAfterASlowCommand: a real server's SLOWLOG, LATENCY LATEST and
// INFO latencystats after DEBUG SLEEP 0.05, and nothing new when read
// again.
func TestReadAfterASlowCommand(t *testing.T) {
	c := start(t, "--latency-monitor-threshold", "10")
	ctx := context.Background()
	var rd Reader
	first := read(t, &rd, c, true)
	if !first.SlowLogRead || !first.SlowLogFirst || len(first.SlowLog) != 0 || !first.LatencyRead || len(first.Latency) != 0 {
		t.Fatalf("a fresh server: %+v", first)
	}
	if err := c.Do(ctx, "debug", "sleep", "0.05").Err(); err != nil {
		t.Fatal(err)
	}
	res := read(t, &rd, c, true)
	// Under load any command may be slow too (vkwatch's own INFO): the
	// DEBUG SLEEP is one of the new entries.
	var e *spike.SlowEntry
	for i := range res.SlowLog {
		if res.SlowLog[i].Command == "DEBUG SLEEP" {
			e = &res.SlowLog[i]
		}
	}
	if res.SlowLogFirst || e == nil {
		t.Fatalf("SLOWLOG after DEBUG SLEEP: %+v", res)
	}
	if e.Duration < 50*time.Millisecond || !strings.HasPrefix(e.Client, "127.0.0.1:") || time.Since(time.Unix(e.Time, 0)) > time.Minute {
		t.Errorf("entry %+v", e)
	}
	var cmd *spike.LatencyEvent
	for i := range res.Latency {
		if res.Latency[i].Event == "command" {
			cmd = &res.Latency[i]
		}
	}
	if cmd == nil || cmd.Latest < 50*time.Millisecond {
		t.Errorf("LATENCY LATEST %+v", res.Latency)
	}
	if st, ok := res.Stats["debug"]; !ok || st.P999 < 50*time.Millisecond || st.P50 <= 0 {
		t.Errorf("latencystats %+v", res.Stats)
	}
	again := read(t, &rd, c, true)
	for _, n := range again.SlowLog {
		if n.ID <= e.ID {
			t.Errorf("read again: an entry read before: %+v", n)
		}
	}
	for _, l := range again.Latency {
		if l == *cmd {
			t.Errorf("read again: a row read before: %+v", l)
		}
	}
	if no := read(t, &rd, c, false); no.LatencyRead || no.Latency != nil {
		t.Errorf("LATENCY LATEST read unasked: %+v", no)
	}
}

// TestNeverAValue: with every command logged, SLOWLOG's entries name the
// command (and subcommand) and never an argument.
func TestNeverAValue(t *testing.T) {
	c := start(t, "--slowlog-log-slower-than", "0")
	ctx := context.Background()
	if err := c.Set(ctx, "secret-key", "secret-value", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigGet(ctx, "maxmemory").Err(); err != nil {
		t.Fatal(err)
	}
	var rd Reader
	res := read(t, &rd, c, false)
	var names []string
	for _, e := range res.SlowLog {
		names = append(names, e.Command)
		if strings.Contains(e.Command, "secret") {
			t.Errorf("a value in %+v", e)
		}
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, "SET") || !strings.Contains(got, "CONFIG GET") {
		t.Errorf("commands %s", got)
	}
}

// TestRefused: a user without the permissions gets the server's words,
// not an error of the read.
func TestRefused(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	if err := c.Do(ctx, "acl", "setuser", "watcher", "on", ">pw", "+ping").Err(); err != nil {
		t.Fatal(err)
	}
	u := redis.NewClient(&redis.Options{Addr: c.Options().Addr, Username: "watcher", Password: "pw", Protocol: 2, DisableIdentity: true})
	defer u.Close()
	var rd Reader
	res := read(t, &rd, u, true)
	if res.SlowLogRead || !strings.HasPrefix(res.SlowLogErr, "NOPERM") || !strings.HasPrefix(res.LatencyErr, "NOPERM") || res.Stats != nil {
		t.Errorf("%+v", res)
	}
}

// TestIDsGoBack: ids lower than the last one read are a restarted
// server's: the read is a first one again.
func TestIDsGoBack(t *testing.T) {
	c := start(t, "--slowlog-log-slower-than", "0")
	rd := Reader{lastID: 1000, haveID: true}
	res := read(t, &rd, c, false)
	if !res.SlowLogFirst || len(res.SlowLog) == 0 || rd.lastID >= 1000 {
		t.Errorf("%+v, last id %d", res, rd.lastID)
	}
}

func TestTransportError(t *testing.T) {
	c := start(t)
	c.Close()
	var rd Reader
	if _, err := rd.Read(context.Background(), c, true); err == nil {
		t.Error("no error from a closed client")
	}
}

func TestCommandName(t *testing.T) {
	for args, want := range map[string]string{
		"get k":                 "GET",
		"debug sleep 0.05":      "DEBUG SLEEP",
		"config set a b":        "CONFIG SET",
		"client \x1b]0;x":       "CLIENT",
		"\x1b[31m":              "?",
		"":                      "?",
		strings.Repeat("a", 33): "?",
	} {
		if got := CommandName(strings.Fields(args)); got != want && !(args == "" && got == "?") {
			t.Errorf("%q: %q, want %q", args, got, want)
		}
	}
}

func TestParseLatencyStats(t *testing.T) {
	text := "# Latencystats\r\nlatency_percentiles_usec_config|get:p50=12.031,p99=30.079,p99.9=30.079\r\n" +
		"latency_percentiles_usec_\x1b:p50=1\r\nlatency_percentiles_usec_set:p50=x,p99=-4,p99.9=2\r\nnot:a=line\r\n"
	got := ParseLatencyStats(text)
	want := map[string]spike.CommandStats{
		"config|get": {P50: 12031 * time.Nanosecond, P99: 30079 * time.Nanosecond, P999: 30079 * time.Nanosecond},
		"set":        {P999: 2 * time.Microsecond},
	}
	if len(got) != len(want) || got["config|get"] != want["config|get"] || got["set"] != want["set"] {
		t.Errorf("%+v", got)
	}
}
