package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// servedLabels are the series the exporter describes (and so serves: the
// pedantic registry of the exposition tests checks every metric against
// its description), each with its labels, sorted.
func servedLabels(t *testing.T) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	out := map[string]string{}
	for _, d := range descs {
		m := re.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the description %s", d)
		}
		ls := strings.Split(m[2], ",")
		slices.Sort(ls)
		out[m[1]] = strings.Join(ls, ",")
	}
	return out
}

// expand turns a table cell of names ("`a`, `b_{x,y}`") into the names.
func expand(cell string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cell, -1) {
		name := m[1]
		open := strings.Index(name, "{")
		if open < 0 {
			out = append(out, name)
			continue
		}
		end := strings.Index(name, "}")
		for _, alt := range strings.Split(name[open+1:end], ",") {
			out = append(out, name[:open]+alt+name[end+1:])
		}
	}
	return out
}

// tableRows are the rows of the markdown table of doc whose header line
// starts with header, as cells.
func tableRows(t *testing.T, doc, header string) [][]string {
	t.Helper()
	i := strings.Index(doc, "\n"+header)
	if i < 0 {
		t.Fatalf("no table headed %q", header)
	}
	var rows [][]string
	for _, line := range strings.Split(doc[i+1:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	return rows
}

// TestReadmesListTheSeriesAsServed: the series tables of this package's
// README.md and of the user's README.md list every series the exporter
// serves, each with the labels it is served with, and no other (the
// user's README listed (kind, method, trigger) for
// vkwatch_save_in_progress, which has addr alone: it is served at all
// times, 0 or 1, and a label of the save would make it come and go).
func TestReadmesListTheSeriesAsServed(t *testing.T) {
	served := servedLabels(t)
	check := func(doc string, listed map[string]string) {
		t.Helper()
		for name, want := range served {
			got, ok := listed[name]
			switch {
			case !ok:
				t.Errorf("%s does not list %s", doc, name)
			case got != want:
				t.Errorf("%s lists %s with labels %q; it is served with %q", doc, name, got, want)
			}
		}
		for name := range listed {
			if _, ok := served[name]; !ok {
				t.Errorf("%s lists %s, which is not served", doc, name)
			}
		}
	}
	sorted := func(labels []string) string {
		var ls []string
		for _, l := range labels {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				ls = append(ls, l)
			}
		}
		slices.Sort(ls)
		return strings.Join(ls, ",")
	}

	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, row := range tableRows(t, string(b), "| series | type | labels |") {
		for _, name := range expand(row[0]) {
			listed[name] = sorted(strings.Split(row[2], ","))
		}
	}
	check("source/metrics/README.md", listed)

	b, err = os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed = map[string]string{}
	for _, row := range tableRows(t, string(b), "| series | labels beside `addr` |") {
		labels, noAddr := strings.CutSuffix(row[1], "(no `addr`)")
		ls := strings.Split(labels, ",")
		if !noAddr {
			ls = append(ls, "addr")
		}
		for _, name := range expand(row[0]) {
			listed[name] = sorted(ls)
		}
	}
	check("README.md", listed)
}
