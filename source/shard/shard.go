// Package shard splits a fleet between several vkwatch processes the way
// Prometheus splits targets between servers: a `hashmod` relabelling. A
// node belongs to share I of N when the MD5 of its address, read as the
// big-endian uint64 of the digest's last 8 bytes, is I modulo N, exactly
// as Prometheus' relabel action hashmod computes it over one source label
// (model/relabel: md5.Sum, binary.BigEndian.Uint64(hash[8:]) % modulus).
// So N exporters started with --shard 0/N .. N-1/N watch every node once,
// and a Prometheus shard configured with the same modulus over the same
// addresses keeps the same nodes.
package shard

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Share is one of N shares of a fleet: the nodes whose hash is I modulo N.
// The zero Share holds every node.
type Share struct {
	I, N uint64
}

// maxShares bounds N: more exporters than this for one fleet is a typo.
const maxShares = 1 << 16

// Parse reads "I/N" (0 <= I < N): --shard's value.
func Parse(s string) (Share, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Share{}, fmt.Errorf("shard %q: want I/N, e.g. 0/4 (this process's share I of N, counted from 0)", s)
	}
	i, err1 := strconv.ParseUint(is, 10, 64)
	n, err2 := strconv.ParseUint(ns, 10, 64)
	switch {
	case err1 != nil || err2 != nil:
		return Share{}, fmt.Errorf("shard %q: I and N must be whole numbers, e.g. 0/4", s)
	case n == 0 || n > maxShares:
		return Share{}, fmt.Errorf("shard %q: N must be 1 to %d", s, maxShares)
	case i >= n:
		return Share{}, fmt.Errorf("shard %q: I counts from 0 and must be below N (0/%d to %d/%d)", s, n, n-1, n)
	}
	return Share{I: i, N: n}, nil
}

// Hashmod is Prometheus' hashmod of value with modulus n (n > 0).
func Hashmod(value string, n uint64) uint64 {
	sum := md5.Sum([]byte(value))
	return binary.BigEndian.Uint64(sum[8:]) % n
}

// All reports whether s holds every node: no --shard, or 0/1.
func (s Share) All() bool { return s.N <= 1 }

// Holds reports whether the node at addr (its addr label: host:port as
// vkwatch names it) is in this share.
func (s Share) Holds(addr string) bool {
	return s.All() || Hashmod(addr, s.N) == s.I
}

// String is "I/N", empty for every node.
func (s Share) String() string {
	if s.All() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}
