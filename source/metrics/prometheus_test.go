package metrics

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// promServer is a real Prometheus (Debian's `prometheus`) started by a
// test on loopback, scraping one target, with its storage in a temporary
// directory; stopped when the test ends.
type promServer struct {
	name     string // "native" or "classic", for messages
	base     string // http://127.0.0.1:PORT
	consoles string // promConfig.consoles
	cmd      *exec.Cmd
	log      *servertest.Output
}

// promConfig is what a test's Prometheus does beside scraping.
type promConfig struct {
	// native scrapes native histograms (--enable-feature=native-histograms,
	// Prometheus 2.40+): it then keeps a histogram's native buckets, not
	// its classic ones.
	native bool
	// rules, when set, is a rule file it loads.
	rules []byte
	// consoles, when set, is a directory of console templates it serves
	// at /consoles/.
	consoles string
}

// startPrometheus starts Prometheus scraping target (host:port) and
// evaluating its rules every 100 ms, and waits until it is ready. It
// fails the test when Prometheus is not installed or does not start: it
// is never skipped.
func startPrometheus(t *testing.T, target string, pc promConfig) *promServer {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("this test needs a real Prometheus (apt-get install prometheus): %v", err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 100ms
  scrape_timeout: 100ms
  evaluation_interval: 100ms
scrape_configs:
  - job_name: vkwatch
    static_configs:
      - targets: [%q]
`, target)
	if pc.rules != nil {
		if err := os.WriteFile(filepath.Join(dir, "rules.yml"), pc.rules, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += "rule_files: [rules.yml]\n"
	}
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := servertest.FreePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	p := &promServer{name: "classic", base: "http://" + listen, consoles: pc.consoles, log: &servertest.Output{Limit: 1 << 16}}
	if pc.native {
		p.name = "native"
	}
	args := []string{"--config.file=" + conf, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + listen, "--log.level=warn"}
	if pc.native {
		args = append(args, "--enable-feature=native-histograms")
	}
	if pc.consoles != "" {
		args = append(args, "--web.console.templates="+pc.consoles, "--web.console.libraries="+pc.consoles)
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

// waitReady polls /-/ready until Prometheus answers 200, within a minute.
func (p *promServer) waitReady(t *testing.T, exited <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
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

// sample is one series of an instant query's answer.
type sample struct {
	Labels map[string]string
	Value  float64
}

// api GETs path?params from Prometheus's HTTP API and decodes its data
// into data, failing the test on any error.
func (p *promServer) api(t *testing.T, path string, params url.Values, data any) {
	t.Helper()
	resp, err := http.Get(p.base + path + "?" + params.Encode())
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

// query runs an instant PromQL query whose answer is floats.
func (p *promServer) query(t *testing.T, q string) []sample {
	t.Helper()
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	p.api(t, "/api/v1/query", url.Values{"query": {q}}, &data)
	out := make([]sample, 0, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", q, r.Value[1], err)
		}
		out = append(out, sample{Labels: r.Metric, Value: v})
	}
	return out
}

// one waits until q answers exactly one series and returns it.
func (p *promServer) one(t *testing.T, q string, within time.Duration) sample {
	t.Helper()
	var got []sample
	servertest.WaitFor(t, within, "Prometheus to answer "+q, func() bool {
		got = p.query(t, q)
		return len(got) == 1
	})
	return got[0]
}

// reaches waits until q answers one series at or above min, and fails
// with what it last answered if a minute goes by first.
func (p *promServer) reaches(t *testing.T, q string, min float64, what string) {
	t.Helper()
	var last []sample
	deadline := time.Now().Add(time.Minute)
	for {
		last = p.query(t, q)
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

// points is how many series and points (floats or native histograms) a
// range query answers from start to now, a step every 200 ms.
func (p *promServer) points(t *testing.T, q string, start time.Time) (series, points int) {
	t.Helper()
	var data struct {
		Result []struct {
			Values     []json.RawMessage `json:"values"`
			Histograms []json.RawMessage `json:"histograms"`
		} `json:"result"`
	}
	now := time.Now()
	p.api(t, "/api/v1/query_range", url.Values{"query": {q}, "step": {"0.2"},
		"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(now.Unix()+1, 10)}}, &data)
	for _, r := range data.Result {
		points += len(r.Values) + len(r.Histograms)
	}
	return len(data.Result), points
}

// alert is one of Prometheus's active alerts.
type alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	Value       string            `json:"value"`
}

// firing waits until the alert called name fires, and returns it.
func (p *promServer) firing(t *testing.T, name string, within time.Duration) alert {
	t.Helper()
	var got alert
	servertest.WaitFor(t, within, name+" to fire", func() bool {
		var data struct {
			Alerts []alert `json:"alerts"`
		}
		p.api(t, "/api/v1/alerts", nil, &data)
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

// fired waits until Prometheus's ALERTS series shows the alert called
// name firing at some time in the last 15 minutes (for an alert that may
// have ended already: a condition of a save that ran), and returns its
// labels.
func (p *promServer) fired(t *testing.T, name string, within time.Duration) map[string]string {
	t.Helper()
	q := fmt.Sprintf(`max_over_time(ALERTS{alertname=%q,alertstate="firing"}[15m])`, name)
	return p.one(t, q, within).Labels
}
