package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
)

// connFlags are valkey-cli's connection conventions.
type connFlags struct {
	pass      string
	user      string
	askpass   bool
	db        int
	tls       bool
	sni       string
	cacert    string
	cacertdir string
	cert      string
	key       string
	insecure  bool
}

func (f *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.pass, "pass", "a", "", "password to AUTH with (visible to other users in ps: prefer VALKEYCLI_AUTH or --askpass)")
	fs.StringVar(&f.user, "user", "", "ACL user name (env VALKEYCLI_USER)")
	fs.BoolVar(&f.askpass, "askpass", false, "read the password from the terminal, without echo")
	fs.IntVarP(&f.db, "db", "n", -1, "database number")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS")
	fs.StringVar(&f.sni, "sni", "", "server name for TLS (SNI)")
	fs.StringVar(&f.cacert, "cacert", "", "CA certificate file to verify the server with")
	fs.StringVar(&f.cacertdir, "cacertdir", "", "directory of trusted CA certificates")
	fs.StringVar(&f.cert, "cert", "", "client certificate file")
	fs.StringVar(&f.key, "key", "", "client private key file")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server's certificate")
}

// passwordWarning is valkey-cli's own warning for a password on the command line.
const passwordWarning = "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."

// endpoints turns addresses and flags into endpoints. A password comes, in
// order, from -a, the URL, --askpass, VALKEYCLI_AUTH, REDISCLI_AUTH.
func (a *app) endpoints(f *connFlags, addrs []string) ([]source.Endpoint, error) {
	if len(addrs) == 0 {
		addrs = []string{"127.0.0.1:6379"}
	}
	eps := make([]source.Endpoint, 0, len(addrs))
	warned := false
	warn := func() {
		if !warned {
			fmt.Fprintln(a.stderr, passwordWarning)
			warned = true
		}
	}
	var asked *string
	for _, s := range addrs {
		ep, err := source.ParseAddress(s)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if ep.Password != "" {
			warn()
		}
		switch {
		case f.pass != "":
			warn()
			ep.Password = f.pass
		case ep.Password != "":
		case f.askpass:
			if asked == nil {
				p, err := a.readPassword("Please input password: ")
				fmt.Fprintln(a.stderr)
				if err != nil {
					return nil, usageErr("--askpass: cannot read a password from the terminal: %v", err)
				}
				pw := strings.TrimRight(string(p), "\r\n")
				asked = &pw
			}
			ep.Password = *asked
		case a.getenv("VALKEYCLI_AUTH") != "":
			ep.Password = a.getenv("VALKEYCLI_AUTH")
		case a.getenv("REDISCLI_AUTH") != "":
			ep.Password = a.getenv("REDISCLI_AUTH")
		}
		switch {
		case f.user != "":
			ep.Username = f.user
		case ep.Username != "":
		case a.getenv("VALKEYCLI_USER") != "":
			ep.Username = a.getenv("VALKEYCLI_USER")
		}
		if f.db >= 0 {
			ep.DB = f.db
		}
		if f.tls {
			ep.TLS.Enabled = true
		}
		if ep.TLS.Enabled || f.cacert != "" || f.cert != "" {
			ep.TLS.Enabled = true
			ep.TLS.SNI = f.sni
			ep.TLS.CACert = f.cacert
			ep.TLS.CACertDir = f.cacertdir
			ep.TLS.Cert = f.cert
			ep.TLS.Key = f.key
			ep.TLS.Insecure = f.insecure
		}
		if (f.cert == "") != (f.key == "") {
			return nil, usageErr("--cert and --key go together")
		}
		for _, prev := range eps {
			if prev.Node() == ep.Node() {
				return nil, usageErr("%s is given twice", ep)
			}
		}
		eps = append(eps, ep)
	}
	return eps, nil
}
