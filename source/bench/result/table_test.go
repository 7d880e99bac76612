package result

import (
	"bytes"
	"strings"
	"testing"

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

