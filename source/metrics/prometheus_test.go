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
	base string // http://127.0.0.1:PORT
	cmd  *exec.Cmd
	log  *servertest.Output
}

// startPrometheus starts Prometheus scraping target (host:port) every
// 100 ms and waits until it is ready. It fails the test when Prometheus
// is not installed or does not start: it is never skipped.
func startPrometheus(t *testing.T, target string) *promServer {
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
scrape_configs:
  - job_name: vkwatch
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := servertest.FreePort(t)
	listen := "127.0.0.1:" + strconv.Itoa(port)
	p := &promServer{base: "http://" + listen, log: &servertest.Output{Limit: 1 << 16}}
	p.cmd = exec.Command(bin,
		"--config.file="+conf,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen,
		"--log.level=warn",
	)
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
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
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

// query runs an instant PromQL query through Prometheus's HTTP API.
func (p *promServer) query(t *testing.T, q string) []sample {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", q, body.Error)
	}
	out := make([]sample, 0, len(body.Data.Result))
	for _, r := range body.Data.Result {
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
