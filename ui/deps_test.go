package ui

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// networkSide are the packages of the code that opens connections: the
// client and the packages built on it (each with its subpackages, where
// subs). Nothing under ui draws anything but what sources hand it, and none
// opens a connection, so none of these may be linked into any of them. The
// rolling save the UI drives is source/roll's, pure; the bench results the
// report page reads are source/bench/result's, not the runner's.
var networkSide = []struct {
	path string
	subs bool
}{
	{"github.com/redis/go-redis", true},
	{"github.com/vkwatch/vkwatch/source/watch", true},
	{"github.com/vkwatch/vkwatch/source/fleet", true},
	{"github.com/vkwatch/vkwatch/source/cluster", true},
	{"github.com/vkwatch/vkwatch/source/load", true},
	{"github.com/vkwatch/vkwatch/source/probe", true},
	{"github.com/vkwatch/vkwatch/source/bench", false}, // the runner; its result package is data
}

// onNetworkSide says whether pkg is one of networkSide.
func onNetworkSide(pkg string) bool {
	for _, n := range networkSide {
		if pkg == n.path || n.subs && strings.HasPrefix(pkg, n.path+"/") {
			return true
		}
	}
	return false
}

// TestUIDoesNotLinkTheClient asks the go command for the dependencies of
// every package under ui (not their tests': those start real servers) and
// fails on any of networkSide, naming the chain of imports that brings it
// in.
func TestUIDoesNotLinkTheClient(t *testing.T) {
	// go test puts its own GOROOT/bin first on the PATH of the test.
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to list the dependencies with: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gocmd, "list", "-deps", "-f", "{{.DepOnly}} {{.ImportPath}} {{join .Imports \" \"}}", "./...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderrOf(err))
	}
	imports := map[string][]string{}
	var roots []string
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Fields(line)
		imports[f[1]] = f[2:]
		if f[0] == "false" { // a package ./... names, not only a dependency
			roots = append(roots, f[1])
		}
	}
	// A listing that missed the ui packages would pass whatever they link.
	for _, want := range []string{"github.com/vkwatch/vkwatch/ui", "github.com/vkwatch/vkwatch/ui/page"} {
		if !slices.Contains(roots, want) {
			t.Fatalf("go list ./... from ui named %v, not %s", roots, want)
		}
	}
	for _, root := range roots {
		if !strings.HasPrefix(root, "github.com/vkwatch/vkwatch/ui") {
			t.Fatalf("go list ./... from ui named %s", root)
		}
		order, from := walk(imports, root)
		// The nearest such package is enough to say how it comes in.
		if i := slices.IndexFunc(order, onNetworkSide); i >= 0 {
			t.Errorf("%s depends on %s: %s", root, order[i], strings.Join(chain(from, order[i]), " -> "))
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
