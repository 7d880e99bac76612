//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vkwatch/vkwatch/source/server"
	"github.com/vkwatch/vkwatch/source/server/servertest"
)

// TestSessionTLS watches a real TLS server that requires client
// certificates: over rediss:// with --cacert, over --tls, and with
// --insecure in place of the CA; without a client certificate it fails
// with one line that says what is likely missing.
func TestSessionTLS(t *testing.T) {
	certs := servertest.NewCerts(t)
	srv := servertest.Start(t, server.Options{TLS: certs.Server(true)})
	client := []string{"--cert", certs.ClientCert, "--key", certs.ClientKey}
	for _, args := range [][]string{
		append([]string{"rediss://" + srv.Addr, "--cacert", certs.CA}, client...),
		append([]string{"--tls", "--cacert", certs.CA, srv.Addr}, client...),
		append([]string{"--tls", "--insecure", srv.Addr}, client...),
		append([]string{"--tls", "--insecure", "--cacert", certs.OtherCA, srv.Addr}, client...),
	} {
		s := startSession(t, childEnv(), args...)
		s.waitScreen(15*time.Second, "connected over TLS and sampling", func(f shot) bool {
			p := f.String()
			return connected(p) && sampled(p) && strings.Contains(p, "rediss://"+srv.Addr)
		})
		s.quit()
	}

	s := startSession(t, childEnv(), "--connect-timeout", connectTimeout.String(), "--tls", "--cacert", certs.CA, srv.Addr)
	code := s.wait(connectTimeout + exitMargin)
	lines := s.stderrLines()
	if code != exitConnect || len(lines) != 1 || !strings.HasPrefix(lines[0], "vkwatch: rediss://"+srv.Addr+": ") ||
		!strings.Contains(lines[0], "certificate required") {
		t.Errorf("no client certificate: exit %d, stderr %q", code, lines)
	}
}
