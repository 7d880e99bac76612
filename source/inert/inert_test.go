package inert

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"10.0.0.7:6380", "10.0.0.7:6380"},
		{"ERR unknown command 'BGSAVE'", "ERR unknown command 'BGSAVE'"},
		{"naïve ✓ 東京", "naïve ✓ 東京"},
		{"\x1b]0;PWNED\x07\x1b[31m red", `\x1b]0;PWNED\x07\x1b[31m red`},
		{"a\nb\tc\rd", `a\nb\tc\rd`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m \u009d0;x\u009c", `c1 \u009b31m \u009d0;x\u009c`},
		{"bad \xff\xfe utf8 \xe2\x82", `bad \xff\xfe utf8 \xe2\x82`},
		{"rtl \u202eevil", `rtl \u202eevil`},
		{`back\slash`, `back\slash`},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTextCutsLongText(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("a", 10000),
		strings.Repeat("é", 10000),
		strings.Repeat("\x1b", 10000),
		strings.Repeat("a", Max),
		strings.Repeat("a", Max-1) + "\x1b",
		strings.Repeat("東", Max),
	} {
		got := Text(in)
		if len(got) > Max {
			t.Errorf("Text(%.20q...) is %d bytes, want <= %d", in, len(got), Max)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Text(%.20q...) is not valid UTF-8", in)
		}
		if Text(in) != in && !strings.HasSuffix(got, "…") {
			t.Errorf("Text(%.20q...) = %.20q... was cut without an ellipsis", in, got)
		}
		if strings.HasSuffix(got, `\…`) || strings.HasSuffix(got, `\x1…`) {
			t.Errorf("Text(%.20q...) cut an escape: ...%q", in, got[len(got)-8:])
		}
	}
	if in := strings.Repeat("a", Max); Text(in) != in {
		t.Errorf("text of exactly Max bytes was changed")
	}
	if got := Cut("abcdefgh", 5); got != "ab…" {
		t.Errorf(`Cut("abcdefgh", 5) = %q, want "ab…"`, got)
	}
}

func TestTextCleanDoesNotAllocate(t *testing.T) {
	for _, s := range []string{"BGSAVE fork by replica 10.0.0.7:6380, diskless", "naïve ✓"} {
		if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
			t.Errorf("Text(%q) allocates %v times, want 0", s, n)
		}
	}
}

func TestLines(t *testing.T) {
	in := "server a: ERR \x1b[2J\nserver b: ok"
	want := "server a: ERR \\x1b[2J\nserver b: ok"
	if got := Lines(in); got != want {
		t.Errorf("Lines(%q) = %q, want %q", in, got, want)
	}
	many := strings.Repeat("x\n", 1000)
	if n := strings.Count(Lines(many), "\n"); n >= MaxLines {
		t.Errorf("Lines kept %d lines, want < %d", n+1, MaxLines)
	}
}

func TestCSV(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"10.0.0.7", "10.0.0.7"},
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1", "'+1"}, {"-1+cmd", "'-1+cmd"}, {"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"}, {"\rx", "'\rx"},
	} {
		if got := CSV(c.in); got != c.want {
			t.Errorf("CSV(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// checkInert fails when out holds a code point a terminal could act on, or
// is not valid UTF-8.
func checkInert(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("Text(%q) = %q: invalid UTF-8", in, out)
	}
	for _, r := range out {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || unsafeRune(r) {
			t.Fatalf("Text(%q) = %q holds %U", in, out, r)
		}
	}
	if len(out) > Max {
		t.Fatalf("Text(%q) is %d bytes, over Max", in, len(out))
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;PWNED\x07\x1b[31m", "\u009b2J", "\xff\xc2", "\u202e", strings.Repeat("\x1b", 600), strings.Repeat("é", 300) + "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		checkInert(t, s, out)
		if Clean(s) != (out == s) {
			t.Fatalf("Clean(%q) = %v but Text changed it: %v", s, Clean(s), out != s)
		}
		if Text(out) != out {
			t.Fatalf("Text is not idempotent on %q: %q then %q", s, out, Text(out))
		}
		for _, l := range strings.Split(Lines(s), "\n") {
			checkInert(t, s, l)
		}
	})
}

func TestJSON(t *testing.T) {
	in := map[string]string{"status": "ok\u009b2J\x1b[31m", "ip": "rtl\u202eevil", "fine": "naïve"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(raw)
	if bytes.Contains(out, []byte("\u009b")) || bytes.Contains(out, []byte("\u202e")) || bytes.IndexByte(out, 0x1b) >= 0 {
		t.Errorf("JSON left a control: %q", out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, in) {
		t.Errorf("JSON changed the data: %v %q", err, back)
	}
	clean := []byte(`{"a":"naïve"}`)
	if got := JSON(clean); &got[0] != &clean[0] {
		t.Error("clean JSON was copied")
	}
}
