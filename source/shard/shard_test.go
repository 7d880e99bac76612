package shard

import (
	"fmt"
	"testing"
)

// The expected shares were computed apart from this code, by md5sum and
// Python over the digest's last 16 hex digits:
//
//	h=$(echo -n "$a" | md5sum | cut -c17-32); python3 -c "print(int('$h',16) % 4)"
//
// (cmd/vkwatch's TestShardsScrapedByOnePrometheus checks the split against
// a real Prometheus' hashmod relabelling).
func TestHashmodKnownValues(t *testing.T) {
	for _, c := range []struct {
		addr        string
		m4, m7, m1k uint64
	}{
		{"127.0.0.1:6379", 2, 2, 250},
		{"10.0.0.7:6379", 2, 1, 926},
		{"[::1]:7000", 0, 3, 272},
		{"valkey-0.example:6380", 3, 1, 643},
	} {
		if got := [3]uint64{Hashmod(c.addr, 4), Hashmod(c.addr, 7), Hashmod(c.addr, 1000)}; got != [3]uint64{c.m4, c.m7, c.m1k} {
			t.Errorf("Hashmod(%q) mod 4, 7, 1000 = %v, want %v", c.addr, got, [3]uint64{c.m4, c.m7, c.m1k})
		}
	}
}

func TestSharesSplitEveryNodeOnce(t *testing.T) {
	const n = 4
	var shares [n]Share
	for i := range shares {
		s, err := Parse(fmt.Sprintf("%d/%d", i, n))
		if err != nil {
			t.Fatal(err)
		}
		shares[i] = s
	}
	counts := make([]int, n)
	for p := range 2000 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+p)
		held := 0
		for i, s := range shares {
			if s.Holds(addr) {
				held++
				counts[i]++
			}
		}
		if held != 1 {
			t.Fatalf("%s is held by %d shares, want 1", addr, held)
		}
	}
	for i, c := range counts {
		// 500 each on average; a share far off would be a broken hash.
		if c < 400 || c > 600 {
			t.Errorf("share %d/%d holds %d of 2000 nodes", i, n, c)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Share{"0/4": {0, 4}, "3/4": {3, 4}, " 0/1 ": {0, 1}} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "4/4", "1", "-1/4", "a/b", "0/0", "1/0", "0/99999999"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
	if s, _ := Parse("0/1"); !s.All() || !s.Holds("anything") || s.String() != "" {
		t.Errorf("0/1 should hold every node and print as none")
	}
	if s, _ := Parse("2/4"); s.String() != "2/4" {
		t.Errorf("String = %q", s.String())
	}
}
