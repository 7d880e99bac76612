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
	imports, roots := listUI(t)
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

// listUI asks the go command for the packages under ui and their
// dependencies (not their tests'): the imports of each, and the packages
// ./... names.
func listUI(t *testing.T) (imports map[string][]string, roots []string) {
	t.Helper()
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
	imports = map[string][]string{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		f := strings.Fields(line)
		imports[f[1]] = f[2:]
		if f[0] == "false" { // a package ./... names, not only a dependency
			roots = append(roots, f[1])
		}
	}
	return imports, roots
}

// uiRoot is the root model's package.
const uiRoot = "github.com/vkwatch/vkwatch/ui"

// isView says whether pkg is a view package (ui/costview, ui/panesview,
// ...: a view is named for what it shows, and ends in "view"), or
// the root or ui/replay, which are made of the views.
func isView(pkg string) bool {
	name, ok := strings.CutPrefix(pkg, uiRoot+"/")
	switch {
	case pkg == uiRoot || name == "replay":
		return true
	case !ok || strings.Contains(name, "/"):
		return false
	}
	return strings.HasSuffix(name, "view") && name != "view"
}

// TestViewsStandApart: the rooms of ui stand in order. A view package
// imports no other view, nor the root; what the views share (ui/view,
// ui/status, ui/plot, ui/words, ...) imports no view. So a view can be
// read, tested and changed alone, and a new one is added without
// touching the others.
func TestViewsStandApart(t *testing.T) {
	imports, roots := listUI(t)
	views := 0
	for _, pkg := range roots {
		if isView(pkg) && pkg != uiRoot {
			views++
		}
		for _, q := range imports[pkg] {
			switch {
			case !isView(q):
			case pkg == uiRoot && q != uiRoot+"/replay", pkg == uiRoot+"/replay" && q == uiRoot:
				// The root is made of the views; replay drives the root.
			default:
				t.Errorf("%s imports %s: only the root imports a view", pkg, q)
			}
		}
	}
	// A listing that named no views would pass whatever they import.
	if views < 5 {
		t.Fatalf("%d view packages under ui, want at least 5: %v", views, roots)
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
