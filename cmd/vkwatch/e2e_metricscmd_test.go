package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source/metrics"
)

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
