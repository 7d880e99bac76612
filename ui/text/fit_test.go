package text

import (
	"strconv"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/vkwatch/vkwatch/ui/style"
)

func TestCutBetweenWords(t *testing.T) {
	st := style.New(false)
	// Each case: the line, the cells it is cut to, what is left.
	for _, c := range [][3]string{
		{"save method forkless · forkless infra on", "30", "save method forkless …"},
		{"took 15s server, 15.0s observed", "22", "took 15s server …"},
		// A number goes with its unit, a separator with what it separated.
		{"cow 17.0 MiB · footprint +20.0 MiB", "30", "cow 17.0 MiB …"},
		{"cow 17.0 MiB · footprint +20.0 MiB", "25", "cow 17.0 MiB …"},
		// A label goes with its figure, up to the separator before it.
		{"ok · took 25s server, 24.8s observed", "22", "ok · took 25s …"},
		{"ok · took 25s server, 24.8s observed", "14", "ok …"},
		{"headroom ok (176 MiB of 512 MiB cgroup limit)", "30", "headroom ok (176 MiB …"},
		{"headroom ok (176 MiB of 512 MiB cgroup limit)", "20", "headroom ok …"},
		{"rss 1 MiB peak used 3.00 MiB", "26", "rss 1 MiB …"},
		// One word wider than the room is all that is cut inside.
		{"127.0.0.1:30001", "10", "127.0.0.1…"},
		{"short", "10", "short"},
	} {
		w, _ := strconv.Atoi(c[1])
		for _, in := range []string{c[0], st.Value.R(c[0])} {
			got, n := cut(in, ansi.StringWidth(in), w)
			if ansi.Strip(got) != c[2] || n != ansi.StringWidth(got) || n > w {
				t.Errorf("cut(%q, %d) = %q (%d cells), want %q", in, w, ansi.Strip(got), n, c[2])
			}
		}
	}
}
