package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	screenshot "github.com/vkwatch/vkwatch/ui/shot"
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
		{during, "  progress 31.7%   keys 31,745/100,000   ETA 1.2s ║│   progress 30.0%   keys 30,001/100,000", true},
		{during, "  progress 31.7%   keys 31,745/100,000   ETA 1.0s ║│   progress 9.2%   keys 9,201/100,000", false},
		{during, "  progress 31.7%   keys 31,745/100,000   ETA 1.0s", false},
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

// TestReportPicturesCommitted: the pictures of vkwatch report are there
// and are what go run ./cmd/vkshot --report makes: the page 1400 pixels
// wide, its A4 pages two abreast (wider than one page; as tall as its
// rows of pages make it: a report of five pages is taller than wide),
// the figures.
func TestReportPicturesCommitted(t *testing.T) {
	for _, p := range []struct {
		name      string
		minW      int
		landscape bool
	}{{firstPicture, 1400, true}, {pagePicture, 1400, false}, {printPicture, 1200, false}, {memoryFigure, 600, true}, {costFigure, 600, true}} {
		path := filepath.Join("..", "..", ".media", "report", p.name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("%v (make the pictures with go run ./cmd/vkshot --report)", err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if cfg.Width < p.minW || p.landscape && cfg.Height >= cfg.Width {
			t.Errorf("%s: %dx%d, want at least %d wide%s", path, cfg.Width, cfg.Height, p.minW, map[bool]string{true: " and landscape"}[p.landscape])
		}
	}
}

// TestAbreast: printed pages lie two to a row, in order, on grey.
func TestAbreast(t *testing.T) {
	var pages []image.Image
	for i := range 3 {
		p := image.NewGray(image.Rect(0, 0, 30, 20))
		for j := range p.Pix {
			p.Pix[j] = uint8(10 * (i + 1))
		}
		pages = append(pages, p)
	}
	out := abreast(pages)
	if b := out.Bounds(); b.Dx() != 2*30+3*12 || b.Dy() != 2*20+3*12 {
		t.Fatalf("%v: want two columns and two rows", b)
	}
	for i, at := range []image.Point{{12, 12}, {12 + 30 + 12, 12}, {12, 12 + 20 + 12}} {
		if y := color.GrayModel.Convert(out.At(at.X+1, at.Y+1)).(color.Gray).Y; y != uint8(10*(i+1)) {
			t.Errorf("page %d is not at %v (grey %d there)", i+1, at, y)
		}
	}
	if y := color.GrayModel.Convert(out.At(12+30+12+1, 12+20+12+1)).(color.Gray).Y; y != 0x99 {
		t.Errorf("the empty place of a fourth page is %d, want the grey", y)
	}
}
