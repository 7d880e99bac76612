package ui

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// networkSide are the import paths (prefixes) of the code that opens
// connections: the client and the packages built on it. The UI draws
// what sources hand it and never opens a connection, so none of these
// may be linked into it; the rolling save it drives is source/roll's, pure.
var networkSide = []string{
	"github.com/redis/go-redis/",
	"github.com/vkwatch/vkwatch/source/watch",
	"github.com/vkwatch/vkwatch/source/fleet",
	"github.com/vkwatch/vkwatch/source/cluster",
}

// TestUIDoesNotLinkTheClient asks the go command for the ui package's
// dependencies (not its tests': those start real servers) and fails on
// any of networkSide, naming the chain of imports that brings it in.
func TestUIDoesNotLinkTheClient(t *testing.T) {
	// go test puts its own GOROOT/bin first on the PATH of the test.
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to list the dependencies with: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gocmd, "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", ".")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderrOf(err))
	}
	imports := map[string][]string{}
	root := ""
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Fields(line)
		imports[f[0]] = f[1:]
		root = f[0] // -deps lists the package itself last
	}
	if root != "github.com/vkwatch/vkwatch/ui" {
		t.Fatalf("go list -deps ended with %q, want the ui package", root)
	}
	order, from := walk(imports, root)
	for _, bad := range networkSide {
		// The nearest such package is enough to say how it comes in.
		if i := slices.IndexFunc(order, func(p string) bool { return strings.HasPrefix(p, bad) }); i >= 0 {
			t.Errorf("ui depends on %s: %s", order[i], strings.Join(chain(from, order[i]), " -> "))
		}
	}
}

// walk visits the imports from root breadth first: the packages in the
// order visited, and for each the package that imports it on a shortest
// chain from root.
func walk(imports map[string][]string, root string) (order []string, from map[string]string) {
	from = map[string]string{root: ""}
	order = []string{root}
	for i := 0; i < len(order); i++ {
		for _, q := range imports[order[i]] {
			if _, seen := from[q]; !seen {
				from[q] = order[i]
				order = append(order, q)
			}
		}
	}
	return order, from
}

// chain is the chain of imports walk found from its root to pkg.
func chain(from map[string]string, pkg string) []string {
	var out []string
	for p := pkg; p != ""; p = from[p] {
		out = append([]string{p}, out...)
	}
	return out
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
