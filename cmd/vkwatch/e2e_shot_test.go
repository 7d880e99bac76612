//go:build linux

package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

var (
	savedRe = regexp.MustCompile(`screen saved to (\S+\.svg)`)
	sizeRe  = regexp.MustCompile(`\d+(?:\.\d+)? (?:KiB|MiB|GiB)`)
)

// svgText is every text an SVG draws, one run after the other.
func svgText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	var out strings.Builder
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed SVG: %v", path, err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			inText = e.Name.Local == "text"
		case xml.EndElement:
			if inText {
				out.WriteByte('\n')
			}
			inText = false
		case xml.CharData:
			if inText {
				out.Write(e)
			}
		}
	}
	return out.String()
}

// shoot pauses the screen (pause, until the title line says paused),
// reads it, presses S and waits for the footer to say where the picture
// went; it returns the screen as it was and the picture's text.
func shoot(t *testing.T, s *session, pause, paused string) (screen string, picture string) {
	t.Helper()
	s.press(pause)
	before := s.waitScreen(10*time.Second, "a paused screen", func(f shot) bool { return strings.Contains(f.String(), paused) })
	s.press("S")
	f := s.waitScreen(10*time.Second, "the footer naming the picture", func(f shot) bool { return savedRe.MatchString(f.String()) })
	path := savedRe.FindStringSubmatch(f.String())[1]
	if filepath.Dir(path) != s.cmd.Dir {
		t.Errorf("picture written to %s, want the current directory %s", path, s.cmd.Dir)
	}
	return before.String(), svgText(t, path)
}

// TestShotWritesScreen: in the real binary watching two real servers, S
// writes the screen as an SVG named by the time into the current
// directory, the footer says where, and the picture holds both servers'
// addresses and the sizes the screen showed.
func TestShotWritesScreen(t *testing.T) {
	a := servertest.StartDefault(t)
	b := servertest.StartDefault(t)
	s := startSession(t, childEnv(), a.Addr, b.Addr)
	s.waitScreen(30*time.Second, "both servers' memory", func(f shot) bool {
		return len(sizeRe.FindAllString(leftPane(f), -1)) > 0 && len(sizeRe.FindAllString(rightPane(f), -1)) > 0
	})
	screen, pic := shoot(t, s, "p", "PAUSED at")
	for _, addr := range []string{a.Addr, b.Addr} {
		if !strings.Contains(pic, addr) {
			t.Errorf("the picture lacks %s:\n%s", addr, pic)
		}
	}
	sizes := sizeRe.FindAllString(screen, -1)
	if len(sizes) < 2 {
		t.Fatalf("the screen shows %d sizes:\n%s", len(sizes), screen)
	}
	var lacks []string
	for _, v := range sizes {
		if !strings.Contains(pic, v) {
			lacks = append(lacks, v)
		}
	}
	if len(lacks) > 0 {
		t.Errorf("the screen showed %q, the picture lacks them; screen:\n%s\npicture's text:\n%s", lacks, screen, pic)
	}
	if names, _ := filepath.Glob(filepath.Join(s.cmd.Dir, "vkwatch-*.svg")); len(names) != 1 {
		t.Errorf("pictures in the current directory: %v, want one", names)
	}
	s.quit()
}

// TestShotInReplay: S works in replay too, where space pauses.
func TestShotInReplay(t *testing.T) {
	rec, err := filepath.Abs(filepath.Join("..", "..", "source", "record", "testdata", "two-saves.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s := startSession(t, childEnv(), "replay", rec)
	s.waitScreen(30*time.Second, "the replay", func(f shot) bool { return strings.Contains(f.String(), "127.0.0.1:17002") })
	_, pic := shoot(t, s, " ", "paused (space plays)")
	for _, addr := range []string{"127.0.0.1:17001", "127.0.0.1:17002", "replay of"} {
		if !strings.Contains(pic, addr) {
			t.Errorf("the picture lacks %q:\n%s", addr, pic)
		}
	}
	s.quit()
}
