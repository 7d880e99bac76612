package page

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

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/record"
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

// TestPageOfSaveReports: --report's file of the recording's two saves
// makes a page of those saves: the same table of every save as the
// recording's page, the summary in sentences, and no figure over time
// (there is no sample to draw).
func TestPageOfSaveReports(t *testing.T) {
	rec := load(t, v1Recording)[0].Recording
	var reps []source.SaveReport
	for _, s := range rec.Servers {
		for _, sv := range s.Saves {
			reps = append(reps, sv.SaveReport)
		}
	}
	b, err := record.MarshalReports(reps)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "saves.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fromRec, fromReps := string(render(t, load(t, v1Recording))), string(render(t, load(t, p)))
	table := func(page string) string {
		i := strings.Index(page, `<table class="saves">`)
		if i < 0 {
			t.Fatalf("no table of every save in\n%s", page)
		}
		return page[i : i+strings.Index(page[i:], "</table>")]
	}
	if a, b := table(fromRec), table(fromReps); a != b {
		t.Errorf("the table of every save differs from the recording's:\n%s\nagainst\n%s", b, a)
	}
	for _, want := range []string{
		"The save reports (--report) hold 2 saves on 127.0.0.1:17001 and 127.0.0.1:17002: 1 AOF rewrite, 1 BGSAVE fork, all ok.",
		"The most a save copied on write was 636.0 KiB",
		`<dt data-kind="save reports">`, "save reports (--report): 2 servers, 1 Dec 2026, 08:35:23",
		"2 servers, 2 saves, 1 Dec 2026, 08:35:23",
	} {
		if !strings.Contains(fromReps, want) {
			t.Errorf("the page of save reports does not say %q", want)
		}
	}
	if strings.Contains(fromReps, "<svg ") || strings.Contains(fromReps, "Over time") {
		t.Errorf("the page of save reports draws figures over time, with no sample to draw")
	}

	// A file of no save (the monitor quit before any ended) is a page
	// that says so.
	if err := os.WriteFile(p, []byte("[\n\n]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := string(render(t, load(t, p)))
	for _, want := range []string{"The file holds no save report", "0 servers, no save.", "save reports (--report): 0 servers, no save"} {
		if !strings.Contains(empty, want) {
			t.Errorf("the page of no save report does not say %q", want)
		}
	}
}
