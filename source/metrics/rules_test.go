package metrics

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promtool runs Debian's promtool in dir with args and returns what it
// printed. The test fails when promtool is not installed: it is never
// skipped.
func promtool(t *testing.T, dir string, stdin []byte, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("this test needs promtool (apt-get install prometheus): %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = strings.NewReader(string(stdin))
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// writeRules writes the rules with t's thresholds to dir/rules.yml.
func writeRules(t *testing.T, dir string, th Thresholds) string {
	t.Helper()
	path := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(path, Rules(th), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The shipped rules are valid Prometheus rules, five of them.
func TestRulesPassPromtoolCheck(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir, DefaultThresholds)
	out, err := promtool(t, dir, nil, "check", "rules", "rules.yml")
	if err != nil || !strings.Contains(out, "SUCCESS: 5 rules found") {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// The shipped rules fire at their thresholds and not before, with the
// labels and annotations an operator reads, as promtool's rule unit tests
// evaluate them (rules_test.yml: series at the edge of every threshold).
// The real Prometheus of TestPrometheusStack runs the same rules with
// shorter thresholds (the only difference: Rules' parameters).
func TestShippedRulesFireAtTheirThresholds(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir, DefaultThresholds)
	tests, err := os.ReadFile(filepath.Join("testdata", "rules_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules_test.yml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := promtool(t, dir, nil, "test", "rules", "rules_test.yml")
	if err != nil || !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
