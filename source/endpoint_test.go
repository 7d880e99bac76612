package source

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkwatch/vkwatch/source/server/servertest"
)

func TestParseAddress(t *testing.T) {
	tests := []struct {
		in   string
		want Endpoint
	}{
		{"127.0.0.1:7000", Endpoint{Network: "tcp", Addr: "127.0.0.1:7000"}},
		{"db.example", Endpoint{Network: "tcp", Addr: "db.example:6379"}},
		{"localhost", Endpoint{Network: "tcp", Addr: "localhost:6379"}},
		{":7001", Endpoint{Network: "tcp", Addr: "127.0.0.1:7001"}},
		{"  :7001 ", Endpoint{Network: "tcp", Addr: "127.0.0.1:7001"}},
		{"[::1]:7002", Endpoint{Network: "tcp", Addr: "[::1]:7002"}},
		{"[::1]", Endpoint{Network: "tcp", Addr: "[::1]:6379"}},
		{"::1", Endpoint{Network: "tcp", Addr: "[::1]:6379"}},
		{"/run/valkey/valkey.sock", Endpoint{Network: "unix", Addr: "/run/valkey/valkey.sock"}},
		{"./v.sock", Endpoint{Network: "unix", Addr: "./v.sock"}},
		{"valkey.sock", Endpoint{Network: "unix", Addr: "valkey.sock"}},
		{"redis://h:7003", Endpoint{Network: "tcp", Addr: "h:7003"}},
		{"redis://h", Endpoint{Network: "tcp", Addr: "h:6379"}},
		{"redis://", Endpoint{Network: "tcp", Addr: "127.0.0.1:6379"}},
		{"redis://:s3cret@h:7003/2", Endpoint{Network: "tcp", Addr: "h:7003", Password: "s3cret", DB: 2}},
		{"redis://s3cret@h", Endpoint{Network: "tcp", Addr: "h:6379", Password: "s3cret"}},
		{"valkey://alice:s3cret@10.0.0.5:7004/0", Endpoint{Network: "tcp", Addr: "10.0.0.5:7004", Username: "alice", Password: "s3cret"}},
		{"VALKEY://h:1/15", Endpoint{Network: "tcp", Addr: "h:1", DB: 15}},
		{"rediss://h:7005", Endpoint{Network: "tcp", Addr: "h:7005", TLS: TLSOptions{Enabled: true}}},
		{"valkeys://bob:p%40ss@[::1]:7006/3", Endpoint{Network: "tcp", Addr: "[::1]:7006", Username: "bob", Password: "p@ss", DB: 3, TLS: TLSOptions{Enabled: true}}},
		{"redis://h:7003?db=4", Endpoint{Network: "tcp", Addr: "h:7003", DB: 4}},
		{"unix:///tmp/v.sock", Endpoint{Network: "unix", Addr: "/tmp/v.sock"}},
		{"unix://:pw@/tmp/v.sock?db=5", Endpoint{Network: "unix", Addr: "/tmp/v.sock", Password: "pw", DB: 5}},
	}
	for _, tt := range tests {
		got, err := ParseAddress(tt.in)
		if err != nil {
			t.Errorf("ParseAddress(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseAddress(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseAddressErrors(t *testing.T) {
	tests := []struct {
		in, want string // want: a part of the error
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"h:0", `bad port "0"`},
		{"h:65536", `bad port "65536"`},
		{"h:abc", `bad port "abc"`},
		{"h:", "empty port"},
		{"h:-1", "bad port"},
		{"[::1", "missing ']'"},
		{"[::1]x", "unexpected"},
		{"[nothost]:1", "bad IPv6"},
		{"1:2:zz", "bad address"},
		{"h 1", "white space"},
		{"http://h:1", `unknown scheme "http"`},
		{"redis://:pw@h:99999", "bad port"},
		{"redis://:pw@h:x1", "bad port"},
		{"redis://:pw@h:1/x", `bad database number "x"`},
		{"redis://:pw@h:1/1/2", "bad path"},
		{"redis://:pw@h:1?timeout=3", `unknown URL parameter "timeout"`},
		{"unix://", "empty unix socket path"},
		{"unix://relative/v.sock", "absolute path"},
		{"redis://:pw@h:1/-1", "bad database number"},
	}
	for _, tt := range tests {
		_, err := ParseAddress(tt.in)
		if err == nil {
			t.Errorf("ParseAddress(%q): no error, want one containing %q", tt.in, tt.want)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tt.want) {
			t.Errorf("ParseAddress(%q) = %q, want it to contain %q", tt.in, msg, tt.want)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("ParseAddress(%q): error is not one line: %q", tt.in, msg)
		}
		if strings.Contains(msg, "pw") {
			t.Errorf("ParseAddress(%q): error shows the password: %q", tt.in, msg)
		}
		if strings.TrimSpace(tt.in) != "" && !strings.Contains(msg, "address \"") {
			t.Errorf("ParseAddress(%q) = %q: does not name the input", tt.in, msg)
		}
	}
}

// TestHostPort covers valkey-cli's -h and -p: defaults, IPv6 with and
// without brackets, and the same checks of host and port as ParseAddress.
func TestHostPort(t *testing.T) {
	good := []struct{ host, port, want string }{
		{"", "", "127.0.0.1:6379"},
		{"10.0.0.5", "", "10.0.0.5:6379"},
		{"", "6380", "127.0.0.1:6380"},
		{"cache_1.internal", "7000", "cache_1.internal:7000"},
		{"::1", "7001", "[::1]:7001"},
		{"[::1]", "7002", "[::1]:7002"},
	}
	for _, tt := range good {
		ep, err := HostPort(tt.host, tt.port)
		if err != nil || ep != (Endpoint{Network: "tcp", Addr: tt.want}) {
			t.Errorf("HostPort(%q, %q) = %+v, %v; want tcp %s", tt.host, tt.port, ep, err, tt.want)
		}
	}
	bad := []struct{ host, port, want string }{
		{"h", "0", `bad port "0" (want 1-65535)`},
		{"h", "65536", `bad port "65536"`},
		{"h", "+1", `bad port "+1"`},
		{"h", "x", `bad port "x"`},
		{"user@h", "1", `bad host "user@h"`},
		{"h:1", "1", `bad host "h:1"`},
	}
	for _, tt := range bad {
		_, err := HostPort(tt.host, tt.port)
		if err == nil || err.Error() != tt.want && !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("HostPort(%q, %q): error %v, want %q", tt.host, tt.port, err, tt.want)
		}
	}
}

func TestMaskAddress(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://:topsecret@h:1/x", "redis://:xxxxx@h:1/x"},
		{"redis://user:topsecret@h", "redis://user:xxxxx@h"},
		{"redis://topsecret@h", "redis://xxxxx@h"},
		{"redis://u:p@ss:word@h:1", "redis://u:xxxxx@h:1"},
		{"redis://h:1/db@x", "redis://h:1/db@x"},
		{"h:1", "h:1"},
	}
	for _, tt := range tests {
		if got := maskAddress(tt.in); got != tt.want {
			t.Errorf("maskAddress(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEndpointStringHidesPassword(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.0.0.1:7000", "127.0.0.1:7000"},
		{"redis://:topsecret@h:7003/2", "h:7003/2"},
		{"valkeys://alice:topsecret@h:7004", "rediss://alice@h:7004"},
		{"/tmp/v.sock", "/tmp/v.sock"},
		{"unix://al:topsecret@/tmp/v.sock?db=3", "unix://al@/tmp/v.sock?db=3"},
	}
	for _, tt := range tests {
		ep := mustParseAddress(t, tt.in)
		if got := ep.String(); got != tt.want {
			t.Errorf("%q.String() = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(ep.String(), "topsecret") {
			t.Errorf("%q.String() shows the password", tt.in)
		}
	}
}

func TestEndpointLocal(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"127.0.0.1:1", true},
		{"127.9.8.7:1", true},
		{"localhost", true},
		{"LocalHost:7000", true},
		{"[::1]:7000", true},
		{"/tmp/v.sock", true},
		{"10.0.0.1", false},
		{"db.example", false},
		{"[::2]:1", false},
		{"128.0.0.1", false},
	}
	for _, tt := range tests {
		ep := mustParseAddress(t, tt.in)
		if got := ep.Local(); got != tt.want {
			t.Errorf("%q.Local() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// mustParseAddress is ParseAddress(addr), failing the test if addr does
// not parse.
func mustParseAddress(t testing.TB, addr string) Endpoint {
	t.Helper()
	ep, err := ParseAddress(addr)
	if err != nil {
		t.Fatalf("ParseAddress(%q): %v", addr, err)
	}
	return ep
}

func TestTLSConfig(t *testing.T) {
	certs := servertest.NewCerts(t)
	dir := certs.Dir
	ca, cert, key := certs.CA, certs.ClientCert, certs.ClientKey
	caDir := filepath.Join(dir, "cas")
	if err := os.Mkdir(caDir, 0o700); err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(ca)
	os.WriteFile(filepath.Join(caDir, "a.pem"), caPEM, 0o600)
	os.WriteFile(filepath.Join(caDir, "README"), []byte("not a cert"), 0o600)

	ep := mustParseAddress(t, "rediss://db.example:7005")
	ep.TLS.CACert, ep.TLS.Cert, ep.TLS.Key = ca, cert, key
	c, err := ep.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Fatal("no TLS config for rediss://")
	}
	if c.ServerName != "db.example" {
		t.Errorf("ServerName = %q, want the host", c.ServerName)
	}
	if c.RootCAs == nil || len(c.Certificates) != 1 || c.InsecureSkipVerify {
		t.Errorf("RootCAs %v, %d client certs, insecure %v", c.RootCAs != nil, len(c.Certificates), c.InsecureSkipVerify)
	}
	// The CA pool must verify a certificate the CA signed.
	leaf, err := x509.ParseCertificate(c.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.RootCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client cert does not verify against the --cacert pool: %v", err)
	}

	ep.TLS = TLSOptions{Enabled: true, SNI: "other.example", CACertDir: caDir, Insecure: true}
	c, err = ep.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.ServerName != "other.example" || !c.InsecureSkipVerify || c.RootCAs == nil {
		t.Errorf("SNI/insecure/cacertdir not honoured: %+v", c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: c.RootCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client cert does not verify against the --cacertdir pool: %v", err)
	}

	bad := []struct {
		tls  TLSOptions
		want string
	}{
		{TLSOptions{CACert: filepath.Join(dir, "missing.pem")}, "--cacert: cannot read"},
		{TLSOptions{CACert: key}, "no PEM certificate"},
		{TLSOptions{CACertDir: filepath.Join(dir, "nodir")}, "--cacertdir: cannot read"},
		{TLSOptions{CACertDir: t.TempDir()}, "no PEM certificate in the directory"},
		{TLSOptions{Cert: cert}, "without --key"},
		{TLSOptions{Key: key}, "without --cert"},
		{TLSOptions{Cert: cert, Key: filepath.Join(dir, "missing.key")}, "--key: cannot read"},
		{TLSOptions{Cert: ca, Key: key}, "--cert"},
	}
	for _, b := range bad {
		e := ep
		e.TLS = b.tls
		e.TLS.Enabled = true
		_, err := e.TLSConfig()
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("TLSConfig(%+v) error = %v, want %q", b.tls, err, b.want)
		}
	}
}
