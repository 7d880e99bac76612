package observer

import (
	"math"
	"testing"
	"time"
)

const stats0 = "# Commandstats\r\n" +
	"cmdstat_ping:calls=1000,usec=2000,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_info:calls=10,usec=500,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_config|get:calls=90,usec=900,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_set:calls=5,usec=5,usec_per_call=1.00\r\n" +
	"not_a_stat:1\r\ncmdstat_broken\r\ncmdstat_nocalls:usec=3\r\n"

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

func TestParseCommandStats(t *testing.T) {
	st := ParseCommandStats(stats0)
	want := Stats{"ping": {1000, 2000}, "info": {10, 500}, "config|get": {90, 900}, "set": {5, 5}}
	if len(st) != len(want) {
		t.Fatalf("parsed %v, want %v", st, want)
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %v, want %v", k, st[k], v)
		}
	}
}

func TestMeterAlone(t *testing.T) {
	// vkwatch alone on the server: its cost is every microsecond of its
	// commands, whatever their prices.
	var m Meter
	if m.Ready() {
		t.Fatal("ready before a reading")
	}
	own := Counts{"ping": 1000, "info": 10, "config get": 90}
	m.Observe(ParseCommandStats(stats0), own, time.Second, false)
	// First reading: the averages since the counters began.
	if got := m.Seconds(); !near(got, (2000+500+900)/1e6) {
		t.Errorf("first reading: %v s", got)
	}
	if _, _, ok := m.Share(); ok {
		t.Error("a share before any window")
	}
	// 10 s later: 5,000 PINGs at 3 µs, 10 INFO at 80 µs, 45 CONFIG GET.
	st := Stats{"ping": {6000, 2000 + 15000}, "info": {20, 500 + 800}, "config|get": {135, 900 + 450}, "set": {5, 5}}
	own = Counts{"ping": 6000, "info": 20, "config get": 135}
	m.Observe(st, own, 11*time.Second, false)
	wantWindow := (15000 + 800 + 450) / 1e6
	if got := m.Seconds(); !near(got, 3400/1e6+wantWindow) {
		t.Errorf("after the window: %v s", got)
	}
	if s, w, ok := m.Share(); !ok || w != 10*time.Second || !near(s, wantWindow/10) {
		t.Errorf("share %v over %v (%v), want %v over 10s", s, w, ok, wantWindow/10)
	}
	// Between readings the figure stands: no guess.
	if got := m.Seconds(); !near(got, 3400/1e6+wantWindow) {
		t.Errorf("between readings: %v s", got)
	}
	if m.PerCall("ping") != 3e-6 {
		t.Errorf("a PING's price %v, want 3 µs", m.PerCall("ping"))
	}
}

func TestMeterShared(t *testing.T) {
	// Another client sends as many PINGs: vkwatch pays for its own half.
	var m Meter
	m.Observe(Stats{"ping": {0, 0}}, Counts{"ping": 0}, 0, false)
	m.Observe(Stats{"ping": {2000, 4000}}, Counts{"ping": 1000}, time.Second, false)
	if got := m.Seconds(); !near(got, 2000/1e6) {
		t.Errorf("got %v s, want 0.002", got)
	}
}

func TestMeterOldServerAndReset(t *testing.T) {
	// Before 7.0 a command and its subcommands are one line.
	var m Meter
	m.Observe(Stats{"config": {10, 100}}, Counts{"config get": 10}, 0, false)
	if got := m.Seconds(); !near(got, 100/1e6) {
		t.Errorf("config on an old server: %v", got)
	}
	// The counters began again (CONFIG RESETSTAT): no negative window.
	m.Observe(Stats{"config": {4, 80}}, Counts{"config get": 14}, time.Second, false)
	if got := m.Seconds(); !near(got, 100/1e6+4*20/1e6) {
		t.Errorf("after a reset: %v", got)
	}
	// A command the server does not list costs nothing known: not counted.
	m.Observe(Stats{}, Counts{"hello": 3}, 2*time.Second, true)
	if got := m.Seconds(); got < 0 {
		t.Errorf("negative: %v", got)
	}
}
