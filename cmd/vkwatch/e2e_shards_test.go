//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/metrics/promtest"
	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// shardFleet and shardCount are the fleet of TestShardsScrapedByOnePrometheus:
// forty real servers (hz 1, a fleet at rest) split over four exporters,
// about ten a share.
const (
	shardFleet = 40
	shardCount = 4
)

// TestShardsScrapedByOnePrometheus runs four vkwatch exporters, each on
// its share of one nodes file (--shard I/4), scraped by one real
// Prometheus. Every node is served by exactly one exporter, the one whose
// share Prometheus' own hashmod relabelling gives the node's address; the
// shipped dashboard's queries and alert rules work across the four
// unchanged: each query answers for every node, each rule evaluates
// without error, and a node stopped is reported down once, by its
// exporter.
func TestShardsScrapedByOnePrometheus(t *testing.T) {
	srvs := servertest.StartMany(t, shardFleet, server.Options{Args: []string{"--hz", "1"}})
	nodes := make([]string, len(srvs))
	for i, s := range srvs {
		nodes[i] = s.Addr
	}
	file := filepath.Join(t.TempDir(), "fleet.txt")
	if err := os.WriteFile(file, []byte("# the fleet, split four ways\n"+strings.Join(nodes, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exporters := make([]string, shardCount)
	running := make([]*headless, shardCount)
	for i := range exporters {
		exporters[i] = "127.0.0.1:" + strconv.Itoa(servertest.FreePort(t))
		// PINGs every 100 ms, not the budget's 1,000 a second each: four
		// exporters under -race beside the rest of the suite.
		running[i] = startHeadless(t, "--nodes", file, "--shard", fmt.Sprintf("%d/%d", i, shardCount),
			"--metrics", exporters[i], "--ping-interval", "100ms")
	}
	rules, err := exec.Command(vkwatchBin, "metrics", "rules").Output()
	if err != nil {
		t.Fatalf("vkwatch metrics rules: %v", err)
	}
	// Scraped every second: four race-built exporters on a loaded machine
	// can take longer than the stack test's 100 ms to answer.
	prom := promtest.Start(t, promtest.Config{Targets: exporters, Interval: time.Second, Rules: rules, Jobs: hashmodJobs(nodes)})

	// Every node served once, by the exporter of its share.
	promWait(t, 90*time.Second, "Prometheus to hold every node up", func() (bool, string) {
		up := prom.Query(t, "vkwatch_node_up == 1")
		return len(up) >= shardFleet, fmt.Sprintf("%d of %d up; the exporters' scrapes: %s", len(up), shardFleet, scrapeErrors(t, prom))
	})
	share := prometheusShares(t, prom)
	served := map[string][]string{}
	for _, s := range prom.Query(t, "vkwatch_node_up") {
		served[s.Labels["addr"]] = append(served[s.Labels["addr"]], s.Labels["instance"])
	}
	perShare := make([]int, shardCount)
	for _, n := range nodes {
		i, ok := share[n]
		switch {
		case !ok:
			t.Errorf("%s: Prometheus' hashmod relabelling kept it in no share", n)
		case !slices.Equal(served[n], []string{exporters[i]}):
			t.Errorf("%s: served by %v; want only the exporter of share %d/%d (%s), as Prometheus' hashmod has it", n, served[n], i, shardCount, exporters[i])
		}
		perShare[i]++
		delete(served, n)
	}
	if len(served) != 0 {
		t.Errorf("series of nodes not in the file: %v", served)
	}
	t.Logf("nodes a share: %v", perShare)
	if slices.Contains(perShare, 0) {
		t.Fatalf("a share holds none of the %d nodes (%v): the check across shards needs each to hold some", shardFleet, perShare)
	}

	// The dashboard's queries for every node at once, as Grafana sends
	// them with the addr variable at All.
	for _, q := range dashboardExprs(t) {
		if strings.Contains(q, "vkwatch_last_save_") || strings.Contains(q, "vkwatch_save_") && !strings.Contains(q, "vkwatch_save_in_progress") {
			continue // served during or after a save: none runs here
		}
		promWait(t, 30*time.Second, "every node in "+q, func() (bool, string) {
			got := map[string]bool{}
			for _, s := range prom.Query(t, q) {
				got[s.Labels["addr"]] = true
			}
			missing := slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return got[n] })
			return len(missing) == 0, fmt.Sprintf("no answer for %d nodes: %v", len(missing), missing)
		})
	}

	// The rules as shipped: each evaluates without error over the four,
	// and a node stopped is down once, served by its share's exporter.
	checkRulesHealthy(t, prom)
	down := srvs[0]
	if err := down.Stop(); err != nil {
		t.Fatal(err)
	}
	var alerts []promtest.Alert
	promWait(t, 30*time.Second, "VkwatchNodeDown pending for "+down.Addr, func() (bool, string) {
		alerts = nodeDownAlerts(t, prom)
		return len(alerts) > 0, "none"
	})
	if len(alerts) != 1 || alerts[0].Labels["addr"] != down.Addr || alerts[0].Labels["instance"] != exporters[share[down.Addr]] {
		t.Errorf("VkwatchNodeDown: %+v; want one alert for %s from %s", alerts, down.Addr, exporters[share[down.Addr]])
	}
	checkRulesHealthy(t, prom)
	for i, h := range running {
		h.stop(t, fmt.Sprintf("exporter %d/%d", i, shardCount))
	}
}

// hashmodJobs are Prometheus scrape jobs, one a share, each keeping the
// nodes whose address Prometheus' own hashmod puts in its share (the
// relabelling of a Prometheus sharded over the same targets). The address
// kept goes in the label node, and nothing is scraped: the node is not
// an HTTP server, so the target is pointed at a closed port.
func hashmodJobs(nodes []string) string {
	var b strings.Builder
	for i := range shardCount {
		fmt.Fprintf(&b, `  - job_name: hashmod-%d
    scrape_interval: 1h
    static_configs:
      - targets: [%s]
    relabel_configs:
      - source_labels: [__address__]
        modulus: %d
        target_label: __tmp_hashmod
        action: hashmod
      - source_labels: [__tmp_hashmod]
        regex: "%d"
        action: keep
      - source_labels: [__address__]
        target_label: node
      - target_label: __address__
        replacement: 127.0.0.1:1
`, i, `"`+strings.Join(nodes, `", "`)+`"`, shardCount, i)
	}
	return b.String()
}

// scrapeErrors says how Prometheus' scrapes of the exporters went.
func scrapeErrors(t *testing.T, prom *promtest.Server) string {
	var data struct {
		ActiveTargets []struct {
			ScrapeURL string `json:"scrapeUrl"`
			Health    string `json:"health"`
			LastError string `json:"lastError"`
		} `json:"activeTargets"`
	}
	prom.API(t, "/api/v1/targets", map[string][]string{"scrapePool": {"vkwatch"}}, &data)
	var out []string
	for _, tg := range data.ActiveTargets {
		out = append(out, tg.ScrapeURL+" "+tg.Health+" "+tg.LastError)
	}
	return strings.Join(out, "; ")
}

// prometheusShares is the share Prometheus' hashmod jobs gave each node.
func prometheusShares(t *testing.T, prom *promtest.Server) map[string]int {
	t.Helper()
	var data struct {
		ActiveTargets []struct {
			Labels map[string]string `json:"labels"`
		} `json:"activeTargets"`
	}
	prom.API(t, "/api/v1/targets", map[string][]string{"state": {"active"}}, &data)
	share := map[string]int{}
	for _, tg := range data.ActiveTargets {
		job, node := tg.Labels["job"], tg.Labels["node"]
		i, ok := strings.CutPrefix(job, "hashmod-")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(i)
		if err != nil {
			t.Fatalf("job %q", job)
		}
		if prev, dup := share[node]; dup {
			t.Errorf("%s kept by hashmod-%d and hashmod-%d", node, prev, n)
		}
		share[node] = n
	}
	return share
}

// dashboardExprs are the queries of the dashboard vkwatch prints, as
// Grafana sends them with the addr variable at All.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command(vkwatchBin, "metrics", "dashboard").Output()
	if err != nil {
		t.Fatalf("vkwatch metrics dashboard: %v", err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	sub := strings.NewReplacer("$addr", ".*", "$__rate_interval", "4s") // four scrapes
	var exprs []string
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			e := sub.Replace(q.Expr)
			if regexp.MustCompile(`\$\w`).MatchString(e) {
				t.Fatalf("%s holds a variable this test does not know", e)
			}
			exprs = append(exprs, e)
		}
	}
	if len(exprs) < 10 {
		t.Fatalf("the dashboard has %d queries", len(exprs))
	}
	return exprs
}

// checkRulesHealthy fails the test when a rule of the vkwatch group has
// not evaluated or evaluated with an error.
func checkRulesHealthy(t *testing.T, prom *promtest.Server) {
	t.Helper()
	var data struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Name      string `json:"name"`
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	promWait(t, 30*time.Second, "every rule evaluated without error", func() (bool, string) {
		prom.API(t, "/api/v1/rules", nil, &data)
		var bad []string
		n := 0
		for _, g := range data.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health != "ok" {
					bad = append(bad, r.Name+": "+r.Health+" "+r.LastError)
				}
			}
		}
		return n > 0 && len(bad) == 0, fmt.Sprintf("%d rules, these not well: %q", n, bad)
	})
}

// promWait asks cond every 100 ms until it holds, and fails the test with
// what it last said when it still does not after within.
func promWait(t *testing.T, within time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	for end := time.Now().Add(within); ; {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s: %s", within, what, last)
		}
		time.Sleep(100 * time.Millisecond) // a poll of Prometheus, which scrapes every 100 ms
	}
}

// nodeDownAlerts are the VkwatchNodeDown alerts, pending or firing.
func nodeDownAlerts(t *testing.T, prom *promtest.Server) []promtest.Alert {
	t.Helper()
	var data struct {
		Alerts []promtest.Alert `json:"alerts"`
	}
	prom.API(t, "/api/v1/alerts", nil, &data)
	return slices.DeleteFunc(data.Alerts, func(a promtest.Alert) bool { return a.Labels["alertname"] != "VkwatchNodeDown" })
}
