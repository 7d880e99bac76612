//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestVersionMatchesBuild: --version says what the toolchain stamped in
// the binary, as `go version -m` reads it (the module version, and the
// revision exactly when one was stamped), and a recording's header holds
// the same string.
func TestVersionMatchesBuild(t *testing.T) {
	out, err := exec.Command(vkwatchBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSuffix(string(out), "\n")
	meta, err := exec.Command(goTool(), "version", "-m", vkwatchBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	modVersion, rev := "", ""
	for _, l := range strings.Split(string(meta), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/vkwatch/vkwatch":
			modVersion = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	t.Logf("--version: %q; go version -m: module %q, revision %q", got, modVersion, rev)
	if modVersion == "" || !strings.HasPrefix(got, "vkwatch "+modVersion) {
		t.Errorf("--version %q does not start with the stamped module version %q", got, modVersion)
	}
	if rev != "" && !strings.Contains(got, " rev "+rev[:12]) {
		t.Errorf("--version %q lacks the stamped revision %s", got, rev)
	}
	if rev == "" && !strings.Contains(got, "no VCS revision stamped") {
		t.Errorf("--version %q: no revision was stamped, and it does not say so", got)
	}

	srv := servertest.StartDefault(t)
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	h := startHeadless(t, "--record", rec, srv.Addr)
	servertest.WaitFor(t, 15*time.Second, "a sample in the recording", func() bool {
		b, _ := os.ReadFile(rec)
		return bytes.Contains(b, []byte(`"sample"`))
	})
	h.stop(t, "headless recording")
	r := readRecording(t, rec)
	if "vkwatch "+r.Header.VKWatch != got {
		t.Errorf("the recording's header says vkwatch %q, --version %q", r.Header.VKWatch, got)
	}
}
