package result

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/forecast"
	"github.com/vkwatch/vkwatch/source/units"
)

func TestTableAbsentIsNA(t *testing.T) {
	s := []Summary{{Server: 0, Addr: "127.0.0.1:1", Runs: []Run{{}}}}
	s[0].Summarise()
	var buf bytes.Buffer
	if err := WriteTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.HasPrefix(line, "copy-on-write") || strings.HasPrefix(line, "memory delta") {
			if !strings.Contains(line, "n/a") || strings.Contains(line, "0 B") {
				t.Errorf("absent value not n/a: %q", line)
			}
		}
	}
	if got := units.CountFloat(27202.4); got != "27,202" {
		t.Errorf("count: %q", got)
	}
	if got := units.BytesFixed(354.7 * 1024 * 1024); got != "354.7 MiB" {
		t.Errorf("size: %q", got)
	}
}

// TestTableFits120: the seed's table, every column's runs and the
// verdict fit a 120-column terminal, with the widest figures a run can
// have: a forced fork, a forecast bound exceeded, an aborted save, seven
// digits of writes; and columns that would not fit side by side are
// printed one under the other.
func TestTableFits120(t *testing.T) {
	s := seedMethods(1.1)
	s[0].Runs = append(s[0].Runs, s[1].Runs[0])
	r := &s[0].Runs[len(s[0].Runs)-1]
	r.Report.Kind, r.Report.COWFrom, r.Report.Status = source.SaveFork, source.FromRDBLastCOW, source.StatusAborted
	r.Forecast.Basis, r.WriterOps = forecast.Bound, 1_234_567
	r.ServerCOW = source.Some[int64](1023 << 20)
	s[0].Runs[1].MemDelta = source.Opt[int64]{} // a cell of 7 of 8 runs
	s[0].Summarise()
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fork*", "exceeded by", "aborted", "1,234,567", "(7 of 8 runs)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q", want)
		}
	}
	for line := range strings.Lines(b.String()) {
		if n := utf8.RuneCountInString(strings.TrimRight(line, "\n")); n > tableWidth {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	// Long labels: the columns one under the other, each whole.
	s[0].Label, s[1].Label = strings.Repeat("replica of 10.0.0.7:6379 ", 2), strings.Repeat("replica of 10.0.0.8:6379 ", 2)
	b.Reset()
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "mean / min / max of"); n != 2 || widest(b.String()) > tableWidth {
		t.Errorf("long labels: %d column heads, widest line %d:\n%s", n, widest(b.String()), b.String())
	}
}
