package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	src "github.com/vkwatch/vkwatch/source/report"
)

var (
	svgRe  = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	textRe = regexp.MustCompile(`(?s)<text [^>]*>(.*?)</text>`)
)

// structure is a page with each inline figure replaced by what it holds:
// how many paths it draws and every text it writes, in order. A golden of
// it shows a change to the page's layout, its tables, its labels and its
// axes, without tying the golden to gonum's coordinates.
func structure(page []byte) string {
	return svgRe.ReplaceAllStringFunc(string(page), func(svg string) string {
		var texts []string
		for _, m := range textRe.FindAllStringSubmatch(svg, -1) {
			texts = append(texts, m[1])
		}
		return fmt.Sprintf("<svg paths=%d>\n  %s\n</svg>", strings.Count(svg, "<path"), strings.Join(texts, "\n  "))
	})
}

func load(t *testing.T, paths ...string) []src.Input {
	t.Helper()
	var ins []src.Input
	for _, p := range paths {
		in, err := src.Load(p, false)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return ins
}

func render(t *testing.T, ins []src.Input) []byte {
	t.Helper()
	r, err := Build(ins)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), "test"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var v1Recording = filepath.Join("..", "..", "source", "record", "testdata", "two-saves.jsonl")

// TestPageStructure: a recording of two servers and a bench's results on
// one page, as a golden of the page's structure.
func TestPageStructure(t *testing.T) {
	page := render(t, load(t, v1Recording, filepath.Join("testdata", "bench.json")))
	golden.RequireEqual(t, structure(page))
}

// TestPageSelfContained: the page fetches nothing (no script, no src or
// href, no CSS url or import), and every figure is inline SVG.
func TestPageSelfContained(t *testing.T) {
	page := string(render(t, load(t, v1Recording, filepath.Join("testdata", "bench.json"))))
	for _, bad := range []string{"<script", " src=", " href=", "url(", "@import", "<link", "<img", "<iframe", "<object"} {
		if strings.Contains(page, bad) {
			i := strings.Index(page, bad)
			t.Errorf("the page holds %q: %q", bad, page[max(0, i-60):min(len(page), i+60)])
		}
	}
	// The recording's two saves have no progress reports: no cost curve.
	if n := strings.Count(page, "<svg "); n != 2*3 {
		t.Errorf("%d inline figures, want 3 per server of 2 and no cost curve", n)
	}
}

// TestPageInertText: what a file says reaches the page as text: markup is
// escaped, and escape sequences and other control characters are gone,
// in the tables and in the figures alike.
func TestPageInertText(t *testing.T) {
	data, err := os.ReadFile(v1Recording)
	if err != nil {
		t.Fatal(err)
	}
	evil := `<script>alert(1)</script>\u001b[31m\u202e`
	data = bytes.Replace(data, []byte(`"addr":"127.0.0.1:17001"`), []byte(`"addr":"`+evil+`"`), 1)
	// A save's kind reaches the summary's sentences, its table, the
	// figures' labels and the table of saves.
	data = bytes.ReplaceAll(data, []byte(`"kind":"AOF rewrite"`), []byte(`"kind":"`+evil+`"`))
	p := filepath.Join(t.TempDir(), "evil.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	page := string(render(t, load(t, p)))
	if strings.Contains(page, "<script") {
		t.Errorf("markup from the file reached the page unescaped")
	}
	if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 5 {
		t.Errorf("the hostile address and kind are on the page as text %d times, want them in the story, the tables and a figure", n)
	}
	if strings.ContainsAny(page, "\x1b\u202e") {
		t.Errorf("a control or bidi character from the file reached the page")
	}
}
