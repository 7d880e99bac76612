// Package gobuild builds ./cmd/vkwatch from the module the current
// directory is in, for the repository's own tools (vkperf measures the
// binary, vkshot photographs it) when they are not given one.
package gobuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// VKWatch runs `go build -o DIR/vkwatch ./cmd/vkwatch` at the root of the
// module holding the current directory and returns the binary's path.
// tool names the caller in the error given outside the module.
func VKWatch(ctx context.Context, dir, tool string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside the vkwatch module: run %s from the checkout, or pass --vkwatch", tool)
	}
	bin := filepath.Join(dir, "vkwatch")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/vkwatch")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/vkwatch: %w\n%s", err, out)
	}
	return bin, nil
}
