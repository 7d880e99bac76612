package metrics

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vkwatch/vkwatch/source/metrics/promtest"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// dashboardPicture, when set, is where TestPrometheusStack writes its
// picture of the dashboard (PNG); it always makes one, in a temporary
// directory otherwise. To regenerate the README's:
//
//	go test ./source/metrics -run TestPrometheusStack -dashboard-picture "$PWD/.media/dashboard.png"
var dashboardPicture = flag.String("dashboard-picture", "", "write the stack test's picture of the dashboard to this PNG file")

// grafanaDashboard is the part of a Grafana dashboard these tests read.
type grafanaDashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		RefID        string `json:"refId"`
	} `json:"targets"`
}

func parseDashboard(t *testing.T) grafanaDashboard {
	t.Helper()
	var d grafanaDashboard
	if err := json.Unmarshal(Dashboard(), &d); err != nil {
		t.Fatalf("the dashboard is no JSON: %v", err)
	}
	return d
}

// seriesName finds the vkwatch series a query reads.
var seriesName = regexp.MustCompile(`vkwatch_[a-z_]+`)

// Every panel of the dashboard reads the Prometheus the user picks, for
// the servers picked, and only series the exporter serves.
func TestDashboardReadsTheExportersSeries(t *testing.T) {
	d := parseDashboard(t)
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	if !vars["datasource"] || !vars["addr"] || d.UID == "" || d.Title == "" {
		t.Fatalf("dashboard %q (uid %q) lacks its datasource or addr variable: %v", d.Title, d.UID, vars)
	}
	served := map[string]bool{}
	for _, desc := range descs {
		name := seriesName.FindString(desc.String())
		for _, suffix := range []string{"", "_bucket", "_count", "_sum"} {
			served[name+suffix] = true
		}
	}
	graphs := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		graphs++
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %q, %d queries", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for _, q := range p.Targets {
			for _, name := range seriesName.FindAllString(q.Expr, -1) {
				if !served[name] {
					t.Errorf("panel %q reads %s, which the exporter does not serve", p.Title, name)
				}
			}
			if !strings.Contains(q.Expr, `addr=~"$addr"`) {
				t.Errorf("panel %q: %s does not follow the addr variable", p.Title, q.Expr)
			}
		}
	}
	if graphs < 10 {
		t.Errorf("%d panels", graphs)
	}
}

// addrRegex is addr as Grafana puts a value of the addr variable in a
// query: a regular expression in a PromQL string, backslashes doubled.
func addrRegex(addr string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(addr), `\`, `\\`)
}

// exprs are the dashboard's queries as Grafana sends them for addr, with
// the panel each belongs to.
func dashboardQueries(t *testing.T, addr string) (titles, exprs []string) {
	d := parseDashboard(t)
	sub := strings.NewReplacer("$addr", addrRegex(addr), "$__rate_interval", "1s")
	for _, p := range d.Panels {
		for _, q := range p.Targets {
			e := sub.Replace(q.Expr)
			if strings.Contains(e, "$") {
				t.Fatalf("panel %q: %s holds a variable this test does not know", p.Title, e)
			}
			titles, exprs = append(titles, p.Title), append(exprs, e)
		}
	}
	return titles, exprs
}

// checkDashboard: every query of the dashboard returns data from both
// Prometheus over the stack's run (native and classic histograms alike),
// and the picture of it Prometheus' console graphs draw shows every
// panel without an error.
func (s *stack) checkDashboard(t *testing.T) {
	titles, exprs := dashboardQueries(t, s.addr)
	for i, e := range exprs {
		for _, p := range []*promtest.Server{s.native, s.classic} {
			servertest.WaitFor(t, 30*time.Second, fmt.Sprintf("panel %q's %s to return data from the %s Prometheus", titles[i], e, p.Name), func() bool {
				n, pts := p.Points(t, e, s.start)
				return n > 0 && pts > 0
			})
		}
	}
	s.picture(t)
}

// consolePage is the dashboard as a Prometheus console template: its
// panels in a grid, each a PromConsole.Graph (Rickshaw, from Prometheus'
// own static files) of the panel's queries for addr since start.
func consolePage(t *testing.T, addr string, start time.Time) (page string, graphs int) {
	d := parseDashboard(t)
	sub := strings.NewReplacer("$addr", addrRegex(addr), "$__rate_interval", "2s")
	var b strings.Builder
	b.WriteString(consoleHead)
	fmt.Fprintf(&b, "<h4>%s: every panel's queries for %s, drawn by Prometheus' console graphs (Grafana draws the same queries in its own style)</h4>\n<div class=grid>\n",
		html.EscapeString(d.Title), html.EscapeString(addr))
	var script strings.Builder
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		graphs++
		var es, names []string
		for _, q := range p.Targets {
			es, names = append(es, sub.Replace(q.Expr)), append(names, legendFunc(q.LegendFormat))
		}
		fmt.Fprintf(&b, "<div class=panel><h6>%s</h6><div id=g%d></div></div>\n", html.EscapeString(p.Title), p.ID)
		format := "humanize"
		if p.FieldConfig.Defaults.Unit == "bytes" {
			format = "humanize1024"
		}
		// Every series is at or above 0 but the headroom, which a fork
		// may leave below: a constant series then still has a scale.
		low := "min: 0, "
		if strings.Contains(strings.Join(es, ""), "headroom") {
			low = ""
		}
		ej, _ := json.Marshal(es)
		fmt.Fprintf(&script, "new PromConsole.Graph({node: document.querySelector('#g%d'), expr: %s, name: [%s], duration: %d, width: 540, height: 150, %s"+
			"yAxisFormatter: PromConsole.NumberFormatter.%s, yHoverFormatter: PromConsole.NumberFormatter.%s});\n",
			p.ID, ej, strings.Join(names, ", "), int(time.Since(start).Seconds())+5, low, format, format)
	}
	b.WriteString("</div>\n<script>\n" + script.String() + "</script>\n</body></html>\n")
	return b.String(), graphs
}

// legendLabel is a {{label}} of a Grafana legend.
var legendLabel = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// legendFunc is a Grafana legend format as a JavaScript function of a
// series' labels, for PromConsole.Graph's name (its own [[label]] names
// drop the text after the last label). The address is left out where the
// legend says more: the page names the server.
func legendFunc(format string) string {
	if rest := strings.TrimSpace(strings.TrimPrefix(format, "{{addr}}")); rest != "" {
		format = rest
	}
	var parts []string
	last := 0
	for _, m := range legendLabel.FindAllStringSubmatchIndex(format, -1) {
		lit, _ := json.Marshal(format[last:m[0]])
		label, _ := json.Marshal(format[m[2]:m[3]])
		parts = append(parts, string(lit), "m["+string(label)+"]")
		last = m[1]
	}
	lit, _ := json.Marshal(format[last:])
	return "function(m) { return " + strings.Join(append(parts, string(lit)), " + ") + "; }"
}

const consoleHead = `<!doctype html>
<html><head>
<link type="text/css" rel="stylesheet" href="/classic/static/rickshaw/rickshaw.min.css">
<link type="text/css" rel="stylesheet" href="/classic/static/bootstrap4/css/bootstrap.min.css">
<link type="text/css" rel="stylesheet" href="/classic/static/css/prom_console.css">
<script src="/classic/static/d3/d3.min.js"></script>
<script src="/classic/static/rickshaw/rickshaw.min.js"></script>
<script src="/classic/static/jquery/jquery.min.js"></script>
<script>var PATH_PREFIX = "";</script>
<script src="/classic/static/js/prom_console.js"></script>
<style>body{margin:8px} .grid{display:grid;grid-template-columns:repeat(2,600px);gap:6px} .panel{border:1px solid #ddd;padding:4px}</style>
</head><body>
`

// picture opens the dashboard's console page in headless Chromium, waits
// until every panel has drawn at least one series and none shows an
// error, and saves a screenshot (-dashboard-picture, or a temporary file).
func (s *stack) picture(t *testing.T) {
	page, graphs := consolePage(t, s.addr, s.start)
	if err := os.WriteFile(filepath.Join(s.classic.Consoles, "vkwatch.html"), []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath("chromium"),
		chromedp.NoSandbox, // tests run as root, where Chromium's sandbox will not start
		chromedp.DisableGPU,
		chromedp.WindowSize(1240, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, time.Minute)
	defer cancelT()
	// Drawn: a legend line per series in every panel, no error, nothing
	// still loading.
	const drawn = `(() => {
		const panels = [...document.querySelectorAll('.panel')];
		const errs = document.querySelectorAll('.prom_graph_error, .prom_graph_loading').length;
		return {drawn: panels.filter(p => p.querySelector('.rickshaw_legend .line')).length, busy: errs};
	})()`
	type state struct{ Drawn, Busy int }
	if err := chromedp.Do(ctx, chromedp.Navigate(s.classic.Base+"/consoles/vkwatch.html")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var st state
	servertest.WaitFor(t, 30*time.Second, "every panel drawn", func() bool {
		var err error
		if st, err = chromedp.Run(ctx, chromedp.Evaluate[state](drawn)); err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return st.Drawn == graphs && st.Busy == 0
	})
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	out := *dashboardPicture
	if out == "" {
		out = filepath.Join(t.TempDir(), "dashboard.png")
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the dashboard's picture: %s (%d bytes)", out, len(shot))
}

// checkReadmeQueries runs every PromQL example of README.md (its promql
// blocks) through the stack's Prometheus: each must parse and evaluate
// (redis_exporter's series are not there, so most answer nothing).
func (s *stack) checkReadmeQueries(t *testing.T) {
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```promql\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	n := 0
	for _, b := range blocks {
		for _, line := range strings.Split(b[1], "\n") {
			if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			s.native.Query(t, line) // fails the test on a parse or evaluation error
			n++
		}
	}
	if n < 6 {
		t.Errorf("README.md has %d PromQL examples in promql blocks", n)
	}
}
