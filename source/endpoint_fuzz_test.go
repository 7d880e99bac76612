package source

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseAddress checks ParseAddress on any input: it never panics, an
// error is one line that names the input (password masked) and never
// shows the password, and what it accepts is a usable endpoint whose
// display form hides the password and, for TCP, reads back as the same
// endpoint.
//
// The seed corpus (the f.Add calls and testdata/fuzz/FuzzParseAddress) runs
// with every `go test`; a longer run is
//
//	go test ./source -run '^$' -fuzz FuzzParseAddress -fuzztime 5m
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:7000", "db.example", ":7001", "[::1]:7002", "[::1]", "::1",
		"/run/valkey/valkey.sock", "valkey.sock", "redis://h:7003", "redis://",
		"redis://:s3cret@h:7003/2", "redis://s3cret@h", "valkey://alice:s3cret@10.0.0.5:7004/0",
		"rediss://h:7005", "valkeys://bob:p%40ss@[::1]:7006/3", "redis://h:7003?db=4",
		"unix:///tmp/v.sock", "unix://:pw@/tmp/v.sock?db=5",
		"", "h:0", "h:65536", "h:", "[::1", "[nothost]:1", "1:2:zz", "http://h:1",
		"redis://:pw@h:99999", "redis://:pw@h:1/x", "redis://:pw@h:1?timeout=3",
		"redis://u:p@ss:word@h:1", "redis://:secretpw@h:1/1/2", "redis://%zz@h",
		"redis://a%20b:1", "redis://[fe80::1%25eth0]:1", "redis://h:+1", "h:+1",
		"]", "::0%]", "fe80::1%eth0", "[fe80::1%eth0]:7000", "user@h:1", "redis://h]:1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ep, err := ParseAddress(s)
		if err != nil {
			checkAddressError(t, s, err)
			return
		}
		checkEndpoint(t, s, ep)
	})
}

// urlPassword is the password net/url reads from a URL-form input (an
// oracle independent of maskAddress), or "" when there is none.
func urlPassword(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.User == nil {
		return ""
	}
	if p, ok := u.User.Password(); ok {
		return p
	}
	return u.User.Username() // valkey-cli: a lone user info is a password
}

func checkAddressError(t *testing.T, s string, err error) {
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Fatalf("ParseAddress(%q): error is not one line: %q", s, msg)
	}
	prefix := fmt.Sprintf("address %q: ", maskAddress(strings.TrimSpace(s)))
	if !strings.HasPrefix(msg, prefix) || len(msg) == len(prefix) {
		t.Fatalf("ParseAddress(%q) = %q, want %q and a reason", s, msg, prefix)
	}
	// The password must not leak, unless it also stands in the input
	// outside the user info (then no error text could avoid it).
	if pw := urlPassword(s); len(pw) >= 4 {
		rest := s[strings.LastIndex(s, "@")+1:]
		if !strings.Contains(rest, pw) && !strings.Contains(s[:strings.Index(s, "://")+3], pw) &&
			strings.Contains(msg, pw) {
			t.Fatalf("ParseAddress(%q): error shows the password %q: %q", s, pw, msg)
		}
	}
}

func checkEndpoint(t *testing.T, s string, ep Endpoint) {
	if ep.DB < 0 {
		t.Fatalf("ParseAddress(%q): negative db %d", s, ep.DB)
	}
	shown := ep.String()
	if strings.ContainsAny(shown, "\r\n") {
		t.Fatalf("ParseAddress(%q): display form is not one line: %q", s, shown)
	}
	if pw := ep.Password; len(pw) >= 4 && !strings.Contains(ep.Addr, pw) && !strings.Contains(ep.Username, pw) &&
		strings.Contains(shown, pw) {
		t.Fatalf("ParseAddress(%q): display form %q shows the password %q", s, shown, pw)
	}
	switch ep.Network {
	case "unix":
		if ep.Addr == "" {
			t.Fatalf("ParseAddress(%q): empty socket path", s)
		}
		return
	case "tcp":
	default:
		t.Fatalf("ParseAddress(%q): network %q", s, ep.Network)
	}
	host, port, err := net.SplitHostPort(ep.Addr)
	if err != nil {
		t.Fatalf("ParseAddress(%q): Addr %q does not split: %v", s, ep.Addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		t.Fatalf("ParseAddress(%q): port %q of %q", s, port, ep.Addr)
	}
	if host == "" {
		t.Fatalf("ParseAddress(%q): empty host in %q", s, ep.Addr)
	}
	if _, err := ep.TLSConfig(); err != nil {
		t.Fatalf("ParseAddress(%q): TLSConfig: %v", s, err)
	}
	// What vkwatch shows for a TCP endpoint without a user reads back as
	// the same endpoint, less the password: a user can paste it.
	if ep.Username != "" || ep.DB != 0 {
		return
	}
	back, err := ParseAddress(shown)
	if err != nil {
		t.Fatalf("ParseAddress(%q) shows as %q, which does not parse: %v", s, shown, err)
	}
	want := ep
	want.Password = ""
	if back != want {
		t.Fatalf("ParseAddress(%q) = %+v shows as %q, which reads back as %+v", s, ep, shown, back)
	}
}
