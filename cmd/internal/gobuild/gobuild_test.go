package gobuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsideTheModule: run from a directory outside any module, VKWatch
// says so, naming its caller and --vkwatch, and builds nothing.
func TestOutsideTheModule(t *testing.T) {
	out := t.TempDir()
	t.Chdir(t.TempDir())
	_, err := VKWatch(context.Background(), out, "vkperf")
	if err == nil || !strings.Contains(err.Error(), "run vkperf from the checkout, or pass --vkwatch") {
		t.Fatalf("got %v, want the outside-the-module error", err)
	}
	if _, err := os.Stat(filepath.Join(out, "vkwatch")); err == nil {
		t.Error("a binary was built outside the module")
	}
}

// TestBuildsVKWatch: inside the checkout it builds an executable vkwatch.
func TestBuildsVKWatch(t *testing.T) {
	out := t.TempDir()
	bin, err := VKWatch(context.Background(), out, "vkperf")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(bin)
	if err != nil || st.Mode()&0o111 == 0 || filepath.Dir(bin) != out {
		t.Fatalf("built %s: %v, mode %v", bin, err, st)
	}
}
