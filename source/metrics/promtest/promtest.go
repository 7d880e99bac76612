// Package promtest starts a real Prometheus (Debian's `prometheus`) for
// tests, on loopback, and asks its HTTP API. A test that needs one fails
// when it is not installed: it is never skipped.
package promtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// Server is a real Prometheus started by a test on loopback, with its
// storage in a temporary directory; stopped when the test ends.
type Server struct {
	Name     string // "native" or "classic", for messages
	Base     string // http://127.0.0.1:PORT
	Consoles string // Config.Consoles
	cmd      *exec.Cmd
	log      *servertest.Output
}

// Config is what a test's Prometheus scrapes and does beside.
type Config struct {
	// Targets are the host:port of the job "vkwatch", scraped every
	// Interval (default 100 ms), each scrape given as long.
	Targets  []string
	Interval time.Duration
	// Jobs, when set, are more scrape_configs entries (YAML list items,
	// indented by two spaces).
	Jobs string
	// Native scrapes native histograms (--enable-feature=native-histograms,
	// Prometheus 2.40+): it then keeps a histogram's native buckets, not
	// its classic ones.
	Native bool
	// Rules, when set, is a rule file it loads.
	Rules []byte
	// Consoles, when set, is a directory of console templates it serves
	// at /consoles/.
	Consoles string
}

// Start starts Prometheus scraping pc's targets and evaluating its rules
// every 100 ms, and waits until it is ready. It fails the test when
// Prometheus is not installed or does not start: it is never skipped.
func Start(t *testing.T, pc Config) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("this test needs a real Prometheus (apt-get install prometheus): %v", err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	every := cmp.Or(pc.Interval, 100*time.Millisecond)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 100ms
  scrape_timeout: 100ms
  evaluation_interval: 100ms
scrape_configs:
  - job_name: vkwatch
    scrape_interval: %s
    scrape_timeout: %s
    static_configs:
      - targets: [%s]
`, model(every), model(every), quoteAll(pc.Targets)) + pc.Jobs
	if pc.Rules != nil {
		if err := os.WriteFile(filepath.Join(dir, "rules.yml"), pc.Rules, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += "rule_files: [rules.yml]\n"
	}
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := servertest.FreePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	p := &Server{Name: "classic", Base: "http://" + listen, Consoles: pc.Consoles, log: &servertest.Output{Limit: 1 << 16}}
	if pc.Native {
		p.Name = "native"
	}
	args := []string{"--config.file=" + conf, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + listen, "--log.level=warn"}
	if pc.Native {
		args = append(args, "--enable-feature=native-histograms")
	}
	if pc.Consoles != "" {
		args = append(args, "--web.console.templates="+pc.Consoles, "--web.console.libraries="+pc.Consoles)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("cannot start prometheus: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-exited
	})
	p.waitReady(t, exited)
	return p
}

// model is d as a Prometheus duration (whole milliseconds).
func model(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) + "ms" }

// quoteAll is targets as the items of a YAML flow list.
func quoteAll(targets []string) string {
	q := make([]string, len(targets))
	for i, t := range targets {
		q[i] = strconv.Quote(t)
	}
	return strings.Join(q, ", ")
}

// waitReady polls /-/ready until Prometheus answers 200, within a minute.
func (p *Server) waitReady(t *testing.T, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.Base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("prometheus exited at start: %s", p.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 60 s: %v\n%s", err, p.log.String())
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, bounded by the deadline
	}
}

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// API GETs path?params from Prometheus's HTTP API and decodes its data
// into data, failing the test on any error.
func (p *Server) API(t *testing.T, path string, params url.Values, data any) {
	t.Helper()
	resp, err := http.Get(p.Base + path + "?" + params.Encode())
	if err != nil {
		t.Fatalf("%s %v: %v", path, params, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s %v: %v", path, params, err)
	}
	if body.Status != "success" {
		t.Fatalf("%s %v: %s", path, params, body.Error)
	}
	if err := json.Unmarshal(body.Data, data); err != nil {
		t.Fatalf("%s %v: %v", path, params, err)
	}
}

// Query runs an instant PromQL query whose answer is floats.
func (p *Server) Query(t *testing.T, q string) []Sample {
	t.Helper()
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	p.API(t, "/api/v1/query", url.Values{"query": {q}}, &data)
	out := make([]Sample, 0, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", q, r.Value[1], err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out
}

// One waits until q answers exactly one series and returns it.
func (p *Server) One(t *testing.T, q string, within time.Duration) Sample {
	t.Helper()
	var got []Sample
	servertest.WaitFor(t, within, "Prometheus to answer "+q, func() bool {
		got = p.Query(t, q)
		return len(got) == 1
	})
	return got[0]
}

// Reaches waits until q answers one series at or above min, and fails
// with what it last answered if a minute goes by first.
func (p *Server) Reaches(t *testing.T, q string, min float64, what string) {
	t.Helper()
	var last []Sample
	deadline := time.Now().Add(time.Minute)
	for {
		last = p.Query(t, q)
		if len(last) == 1 && last[0].Value >= min {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %s answered %v for a minute, want one series at or above %v s", what, q, last, min)
			return
		}
		time.Sleep(50 * time.Millisecond) // a poll of Prometheus, which scrapes every 100 ms
	}
}

// Points is how many series and points (floats or native histograms) a
// range query answers from start to now, a step every 200 ms.
func (p *Server) Points(t *testing.T, q string, start time.Time) (series, points int) {
	t.Helper()
	var data struct {
		Result []struct {
			Values     []json.RawMessage `json:"values"`
			Histograms []json.RawMessage `json:"histograms"`
		} `json:"result"`
	}
	now := time.Now()
	p.API(t, "/api/v1/query_range", url.Values{"query": {q}, "step": {"0.2"},
		"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(now.Unix()+1, 10)}}, &data)
	for _, r := range data.Result {
		points += len(r.Values) + len(r.Histograms)
	}
	return len(data.Result), points
}

// Alert is one of Prometheus's active alerts.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	Value       string            `json:"value"`
}

// Firing waits until the alert called name fires, and returns it.
func (p *Server) Firing(t *testing.T, name string, within time.Duration) Alert {
	t.Helper()
	var got Alert
	servertest.WaitFor(t, within, name+" to fire", func() bool {
		var data struct {
			Alerts []Alert `json:"alerts"`
		}
		p.API(t, "/api/v1/alerts", nil, &data)
		for _, a := range data.Alerts {
			if a.Labels["alertname"] == name && a.State == "firing" {
				got = a
				return true
			}
		}
		return false
	})
	return got
}

// Fired waits until Prometheus's ALERTS series shows the alert called
// name firing at some time in the last 15 minutes (for an alert that may
// have ended already: a condition of a save that ran), and returns its
// labels.
func (p *Server) Fired(t *testing.T, name string, within time.Duration) map[string]string {
	t.Helper()
	q := fmt.Sprintf(`max_over_time(ALERTS{alertname=%q,alertstate="firing"}[15m])`, name)
	return p.One(t, q, within).Labels
}
