//go:build linux

package main

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/metrics"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestHeadlessMetrics runs vkwatch as an exporter, without a terminal and
// with only --metrics: it serves OpenMetrics with the server's footprint
// and its PING round trips counted by the probe into the histogram, on
// loopback, and ends cleanly on SIGTERM.
func TestHeadlessMetrics(t *testing.T) {
	srv := servertest.StartDefault(t)
	port := servertest.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	h := startHeadless(t, "--metrics", addr, srv.Addr)
	var body string
	pings := regexp.MustCompile(`(?m)^vkwatch_ping_duration_seconds_count\{addr="` + regexp.QuoteMeta(srv.Addr) + `"\} [1-9]`)
	servertest.WaitFor(t, 15*time.Second, "the footprint and PINGs counted at /metrics", func() bool {
		req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		body = string(b)
		return strings.HasPrefix(resp.Header.Get("Content-Type"), "application/openmetrics-text") &&
			strings.Contains(body, `vkwatch_footprint_bytes{addr="`+srv.Addr+`",instrument="proc"`) &&
			pings.MatchString(body)
	})
	for _, want := range []string{`instrument="proc"`, "vkwatch_save_in_progress{", "vkwatch_build_info{", "# EOF"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	// It adds to INFO and re-exports none of it, nor Go's runtime
	// figures: every series is vkwatch's own.
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "vkwatch_") {
			t.Errorf("/metrics serves %q, which is not vkwatch's to export", line)
		}
	}
	if !strings.Contains(h.stderr.String(), "serving metrics at http://"+addr+"/metrics") {
		t.Errorf("stderr does not say where the metrics are: %q", h.stderr.String())
	}
	h.stop(t, "headless exporter")
}

// TestMetricsPortTaken: a --metrics address already in use is a one-line
// error at start, before any server is watched.
func TestMetricsPortTaken(t *testing.T) {
	srv := servertest.StartDefault(t)
	// The server's own port is taken for sure.
	cmd := exec.Command(vkwatchBin, "--metrics", srv.Addr, srv.Addr)
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		t.Fatal("vkwatch ran with its --metrics port taken")
	}
	msg := strings.TrimSpace(stderr.String())
	if !strings.Contains(msg, "--metrics") || !strings.Contains(msg, "address already in use") || strings.Count(msg, "\n") > 0 {
		t.Errorf("stderr %q: want one line about --metrics and the address in use", msg)
	}
}

// `vkwatch metrics dashboard` and `vkwatch metrics rules` print, from the
// real binary, the dashboard and the shipped rules exactly; anything else
// after `metrics` is a usage error (exit 2) that prints nothing.
func TestMetricsPrintsDashboardAndRules(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []byte
	}{
		{[]string{"metrics", "dashboard"}, metrics.Dashboard()},
		{[]string{"metrics", "rules"}, metrics.Rules(metrics.DefaultThresholds)},
	} {
		cmd := exec.Command(vkwatchBin, c.args...)
		cmd.Env = childEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("vkwatch %s: %v, stderr %q", strings.Join(c.args, " "), err, stderr.String())
		}
		if !bytes.Equal(out, c.want) {
			t.Errorf("vkwatch %s printed %d bytes, not the %d it ships", strings.Join(c.args, " "), len(out), len(c.want))
		}
	}
	for _, args := range [][]string{{"metrics"}, {"metrics", "dashbord"}, {"metrics", "rules", "extra"}} {
		cmd := exec.Command(vkwatchBin, args...)
		cmd.Env = childEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if code := exitCode(err); code != exitUsage || len(out) > 0 || !strings.HasPrefix(stderr.String(), "vkwatch: ") {
			t.Errorf("vkwatch %s: exit %d, stdout %q, stderr %q: want exit 2 and one line on stderr", strings.Join(args, " "), code, out, stderr.String())
		}
	}
}
