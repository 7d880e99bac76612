package forecast

import (
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source"
)

// The kernel's setting cannot be changed on this machine: fake /sys and
// /proc trees in testdata stand for hosts that differ.
func TestTHPFromFakeTrees(t *testing.T) {
	always := ReadTHP("testdata/thp-always", 4242)
	if always.Kernel != "always" || always.AnonHuge != source.Some[int64](266240<<10) {
		t.Fatalf("always: %+v", always)
	}
	if w, ok := always.Warning(source.Some(true)); !ok || !strings.Contains(w, "(AnonHugePages 260 MiB): one write during a save copies 2 MiB, not 4 KiB") {
		t.Errorf("huge pages in use: %q %v", w, ok)
	}
	never := ReadTHP("testdata/thp-never", 4242)
	if never.Kernel != "never" || never.AnonHuge != source.Some[int64](0) {
		t.Fatalf("never: %+v", never)
	}
	if w, ok := never.Warning(source.Opt[bool]{}); ok {
		t.Errorf("never, no huge pages: %q", w)
	}
	// always, none in use yet: the server's own setting decides.
	idle := THP{Kernel: "always", AnonHuge: source.Some[int64](0)}
	if _, ok := idle.Warning(source.Some(true)); ok {
		t.Error("disable-thp yes: warned")
	}
	for _, d := range []source.Opt[bool]{source.Some(false), {}} {
		if w, ok := idle.Warning(d); !ok || !strings.Contains(w, "[always]") {
			t.Errorf("disable-thp %+v: %q %v", d, w, ok)
		}
	}
	if c, _ := idle.Cause(source.Opt[bool]{}); c != "THP [always], disable-thp n/a" {
		t.Errorf("disable-thp unknown: %q", c)
	}
	if _, ok := (THP{Kernel: "madvise", AnonHuge: source.Some[int64](0)}).Cause(source.Some(false)); ok {
		t.Error("madvise, none in use: warned")
	}
	if got := ReadTHP("testdata/none", 1); got.Kernel != "" || got.AnonHuge.OK {
		t.Errorf("nothing readable: %+v", got)
	}
	for in, want := range map[string]string{"always [madvise] never": "madvise", "[never]": "never", "x [bogus] y": "", "": ""} {
		if got := bracketed(in); got != want {
			t.Errorf("bracketed(%q) = %q, want %q", in, got, want)
		}
	}
}

// This host's own files parse: whatever the setting, it is one of three.
func TestTHPThisHost(t *testing.T) {
	got := ReadTHP("/", 1)
	switch got.Kernel {
	case "always", "madvise", "never":
	default:
		t.Errorf("this host's transparent_hugepage/enabled read as %q", got.Kernel)
	}
}
