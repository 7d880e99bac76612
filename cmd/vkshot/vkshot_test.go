package main

import (
	"bytes"
	screenshot "github.com/vkwatch/vkwatch/ui/shot"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkSVG fails the test unless b is a well-formed SVG document.
func checkSVG(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := screenshot.WellFormed(b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestMarker checks the default markers on screens as vkwatch draws them.
func TestMarker(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	c.readyDraw = 0
	shots, err := c.shots()
	if err != nil {
		t.Fatal(err)
	}
	ready, during, after := shots[0].when, shots[1].when, shots[2].when
	for _, tt := range []struct {
		m    marker
		text string
		want bool
	}{
		{ready, "ping 10s p50 42µs │ ping 10s p50 79µs", true},
		{ready, "ping 10s p50 42µs │ ping 10s p50 n/a", false},
		{during, "▶ BGSAVE fork by vkwatch  keys 31,745/100,000  31.7%  elapsed 1.2s ║│ ▶ BGSAVE fork by vkwatch  30%  ETA 2.0s", true},
		{during, "▶ BGSAVE fork by vkwatch  31.7%  ETA 1.0s ║│ ▶ BGSAVE fork by vkwatch  9.2%  ETA 9.0s", false},
		{during, "▶ BGSAVE fork by vkwatch  31.7%  ETA 1.0s", false},
		{after, "last save none yet ║│ last save BGSAVE fork · ok · took 11s", false},
		{after, "last save BGSAVE fork · ok ║│ last save BGSAVE fork · ok · took 11s", true},
	} {
		if got := tt.m.holds(screen{Text: tt.text}); got != tt.want {
			t.Errorf("%s on %q: %v, want %v", tt.m.name, tt.text, got, tt.want)
		}
	}
	ready.cells = 3
	if ready.holds(screen{Text: "p50 4 p50 5 ▁▂"}) || !ready.holds(screen{Text: "p50 4 p50 5 ▁▂⣿"}) {
		t.Error("the chart cells are not counted")
	}
	if _, err := (config{ready: "("}).shots(); err == nil {
		t.Error("a bad --ready was accepted")
	}
}

// TestPicturesCommitted: the README's pictures are there, are not empty,
// are SVG, and kept the screen's colours. go run ./cmd/vkshot makes them.
func TestPicturesCommitted(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	fill := regexp.MustCompile(`fill="(#[0-9a-f]{6})"`)
	for _, name := range []string{"before.svg", "during.svg", "after.svg"} {
		path := filepath.Join("..", "..", ".media", name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (make the pictures with go run ./cmd/vkshot)", err)
		}
		if len(b) < 4096 {
			t.Errorf("%s: %d bytes, too small to be a screen", path, len(b))
		}
		checkSVG(t, path, b)
		colours := map[string]bool{}
		for _, m := range fill.FindAllSubmatch(b, -1) {
			colours[string(m[1])] = true
		}
		if len(colours) < 6 || !bytes.Contains(b, []byte(">vkwatch")) {
			t.Errorf("%s: %d colours, want a coloured vkwatch screen", path, len(colours))
		}
		if !bytes.Contains(readme, []byte("(.media/"+name+")")) {
			t.Errorf("the README does not show .media/%s", name)
		}
	}
}

// TestTapeRecordsTheSameSession: demo.tape types the demo command vkshot
// runs by default.
func TestTapeRecordsTheSameSession(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	tape, err := os.ReadFile("../../demo.tape")
	if err != nil {
		t.Fatal(err)
	}
	want := `Type "vkwatch ` + strings.Join(c.demoArgs(), " ") + `"`
	if !bytes.Contains(tape, []byte(want+"\n")) {
		t.Errorf("demo.tape does not type %s", want)
	}
	if !bytes.Contains(tape, []byte(`Type "B"`)) {
		t.Error("demo.tape does not press B")
	}
}
