package servertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
)

// Certs are PEM files for TLS tests, made fresh by NewCerts: a CA, a server
// certificate it signed for 127.0.0.1 / ::1 / localhost, a client
// certificate it signed, an expired server certificate it signed, and a
// second CA that signed nothing the server uses (untrusted).
type Certs struct {
	Dir        string
	CA         string // the CA the server and client certificates chain to
	ServerCert string
	ServerKey  string
	ClientCert string
	ClientKey  string
	// ExpiredCert expired a day ago (signed by CA, valid names).
	ExpiredCert string
	ExpiredKey  string
	// OtherCA is a CA that signed none of these certificates.
	OtherCA string
}

// NewCerts generates the certificates into a temporary directory of t.
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	c := &Certs{Dir: t.TempDir()}
	now := time.Now()
	ca, caKey := newCA(t, "vkwatch test CA", now)
	c.CA = c.write(t, "ca.pem", "CERTIFICATE", ca.Raw)
	other, _ := newCA(t, "vkwatch untrusted CA", now)
	c.OtherCA = c.write(t, "other-ca.pem", "CERTIFICATE", other.Raw)

	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	c.ServerCert, c.ServerKey = c.leaf(t, "server", server, ca, caKey)

	expired := *server
	expired.NotBefore, expired.NotAfter = now.Add(-72*time.Hour), now.Add(-24*time.Hour)
	c.ExpiredCert, c.ExpiredKey = c.leaf(t, "expired", &expired, ca, caKey)

	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "vkwatch test client"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	c.ClientCert, c.ClientKey = c.leaf(t, "client", client, ca, caKey)
	return c
}

// Server returns the files to start a TLS server with its valid
// certificate; authClients requires client certificates.
func (c *Certs) Server(authClients bool) *server.TLSFiles {
	return &server.TLSFiles{Cert: c.ServerCert, Key: c.ServerKey, CACert: c.CA, AuthClients: authClients}
}

// Expired returns the files to start a TLS server whose certificate has
// expired.
func (c *Certs) Expired() *server.TLSFiles {
	return &server.TLSFiles{Cert: c.ExpiredCert, Key: c.ExpiredKey, CACert: c.CA}
}

var serial atomic.Int64

func nextSerial() *big.Int {
	return big.NewInt(time.Now().UnixNano() + serial.Add(1))
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newCA(t testing.TB, name string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(48 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// leaf signs tmpl with the CA and writes NAME.pem and NAME.key.
func (c *Certs) leaf(t testing.TB, name string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (cert, key string) {
	t.Helper()
	k := newKey(t)
	tmpl.SerialNumber = nextSerial()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return c.write(t, name+".pem", "CERTIFICATE", der), c.write(t, name+".key", "PRIVATE KEY", kder)
}

func (c *Certs) write(t testing.TB, name, typ string, der []byte) string {
	t.Helper()
	p := filepath.Join(c.Dir, name)
	// 0600: the server reads them as the same user; keys stay private.
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
