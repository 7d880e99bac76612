package metrics

import (
	"bytes"
	_ "embed"
	"text/template"
)

// The dashboard and the alert rules ship in the binary, for `vkwatch
// metrics dashboard` and `vkwatch metrics rules`; README.md beside this
// file describes them.
var (
	//go:embed dashboard.json
	dashboard []byte
	//go:embed rules.yml.tmpl
	rulesText string

	// The rules are a template whose delimiters ([[ ]]) leave
	// Prometheus' own {{ }} in the annotations alone.
	rulesTemplate = template.Must(template.New("rules").Delims("[[", "]]").Option("missingkey=error").Parse(rulesText))
)

// Dashboard is the Grafana dashboard of vkwatch's series (JSON, for
// Grafana's import).
func Dashboard() []byte { return bytes.Clone(dashboard) }

// Thresholds are the numbers in the alert rules.
type Thresholds struct {
	// DownFor is how long vkwatch_node_up stays 0 before VkwatchNodeDown
	// fires, HeadroomFor how long the headroom stays negative before
	// VkwatchForkWouldExceedMemory does (Prometheus durations).
	DownFor, HeadroomFor string
	// StallSeconds is how long a save's progress stands still before
	// VkwatchSaveStuck fires.
	StallSeconds float64
	// COWShare is the share of the server's RSS the running save's
	// copy-on-write must pass for VkwatchCopyOnWriteHigh.
	COWShare float64
}

// DefaultThresholds are the shipped rules' numbers. Every one of them is
// checked by promtool test rules (rules_test.go).
var DefaultThresholds = Thresholds{DownFor: "1m", HeadroomFor: "5m", StallSeconds: 300, COWShare: 0.5}

// Rules are the Prometheus alert rules (YAML, for rule_files) with t's
// thresholds.
func Rules(t Thresholds) []byte {
	var b bytes.Buffer
	if err := rulesTemplate.Execute(&b, t); err != nil {
		panic(err) // the template is the binary's own: a test runs it
	}
	return b.Bytes()
}
