package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/load"
)

// connFlags are valkey-cli's connection conventions, on the commands that
// connect to a server the user names: the monitor, bench, load and save.
type connFlags struct {
	// host, port, socket and uri are -h, -p, -s and -u: they name the
	// first server, before any ADDR argument.
	host          string
	port          string
	socket        string
	uri           string
	fs            *pflag.FlagSet // where they were registered, to ask what was given
	pass          string
	user          string
	askpass       bool
	noAuthWarning bool
	db            int
	tls           bool
	sni           string
	cacert        string
	cacertdir     string
	cert          string
	key           string
	insecure      bool
}

// connFlagsOf gives cmd valkey-cli's connection flags. -h is the host, as
// in valkey-cli, so help is --help alone on cmd (cobra would otherwise add
// its own -h, --help, and panic on the clash); commands without these
// flags keep cobra's -h, --help.
func connFlagsOf(cmd *cobra.Command) *connFlags {
	f := &connFlags{}
	f.register(cmd.Flags())
	cmd.Flags().Bool("help", false, "help for "+cmd.Name()+" (-h is the host)")
	return f
}

func (f *connFlags) register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVarP(&f.host, "host", "h", "127.0.0.1", "server host (the first server)")
	// A string, so that a bad port gets the same one-line error as in an
	// address rather than pflag's strconv message.
	fs.StringVarP(&f.port, "port", "p", "6379", "server port (the first server)")
	fs.StringVarP(&f.socket, "socket", "s", "", "server unix socket, instead of -h and -p (the first server)")
	fs.StringVarP(&f.uri, "uri", "u", "", "server URI redis://[[user:]pass@]host[:port][/db] (also rediss://, valkey://, valkeys://), instead of -h, -p and -s")
	fs.StringVarP(&f.pass, "pass", "a", "", "password to AUTH with (visible to other users in ps: prefer VALKEYCLI_AUTH or --askpass)")
	fs.StringVar(&f.user, "user", "", "ACL user name (env VALKEYCLI_USER)")
	fs.BoolVar(&f.askpass, "askpass", false, "read the password from the terminal, without echo")
	fs.BoolVar(&f.noAuthWarning, "no-auth-warning", false, "no warning for a password given with -a or in the URI")
	// Not given, the URI's database stands (redis://host/3), else 0: a
	// default of -1 meaning "not given" showed in --help as "(default -1)".
	fs.IntVarP(&f.db, "db", "n", 0, "database number, as in valkey-cli (default: the URI's /db, else 0)")
	fs.BoolVar(&f.tls, "tls", false, "connect with TLS")
	fs.StringVar(&f.sni, "sni", "", "server name for TLS (SNI)")
	fs.StringVar(&f.cacert, "cacert", "", "CA certificate file to verify the server with")
	fs.StringVar(&f.cacertdir, "cacertdir", "", "directory of trusted CA certificates")
	fs.StringVar(&f.cert, "cert", "", "client certificate file")
	fs.StringVar(&f.key, "key", "", "client private key file")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the server's certificate")
}

// connFlagNames are the connection flags' names and shorthands, to tell a
// user who gives one to a command that connects to nothing.
var connFlagNames = func() map[string]bool {
	fs := pflag.NewFlagSet("conn", pflag.ContinueOnError)
	(&connFlags{}).register(fs)
	names := map[string]bool{}
	fs.VisitAll(func(fl *pflag.Flag) {
		names[fl.Name] = true
		if fl.Shorthand != "" {
			names[fl.Shorthand] = true
		}
	})
	return names
}()

// passwordWarning is valkey-cli's own warning for a password on the command line.
const passwordWarning = "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."

// given reports whether the flag called name was on the command line.
func (f *connFlags) given(name string) bool { return f.fs != nil && f.fs.Changed(name) }

// named reports whether -h, -p, -s or -u named a server.
func (f *connFlags) named() bool {
	return f.given("host") || f.given("port") || f.given("socket") || f.given("uri")
}

// clusterAlone refuses any other server beside --cluster SEED: the nodes
// come from discovery, and an ADDR or -h, -p, -s, -u would name a server
// the run then ignores or takes for the seed.
func (f *connFlags) clusterAlone(seed string, addrs []string) error {
	return f.alone("--cluster "+seed+" finds the nodes itself", addrs)
}

// alone refuses any other server beside what names the fleet (--cluster
// SEED, --nodes FILE): an ADDR, -h, -p, -s or -u would name a server the
// run ignores.
func (f *connFlags) alone(what string, addrs []string) error {
	got := slices.Clone(addrs)
	for _, name := range []string{"host", "port", "socket", "uri"} {
		if f.given(name) {
			got = append(got, "--"+name)
		}
	}
	if len(got) == 0 {
		return nil
	}
	return usageErr("%s: give no other address, -h, -p, -s or -u (got %s)", what, strings.Join(got, " "))
}

// first is the server that -h, -p, -s or -u name, as the user wrote it
// (for errors); ok is false when none of them was given.
func (f *connFlags) first() (ep source.Endpoint, as string, ok bool, err error) {
	h, p, s, u := f.given("host"), f.given("port"), f.given("socket"), f.given("uri")
	switch {
	case u && (h || p || s):
		return ep, "", false, usageErr("-u names the server with its URI: leave out -h, -p and -s")
	case s && (h || p):
		return ep, "", false, usageErr("-s names the server by its unix socket: leave out -h and -p")
	case u:
		if !strings.Contains(f.uri, "://") {
			return ep, "", false, usageErr("-u %q: want a URI such as redis://host:port/db (or give the address as an argument)", f.uri)
		}
		ep, err = source.ParseAddress(f.uri)
		if err != nil {
			return ep, "", false, usageErr("-u: %v", err)
		}
		return ep, "-u " + ep.String(), true, nil
	case s:
		if strings.TrimSpace(f.socket) == "" {
			return ep, "", false, usageErr("-s: empty unix socket path")
		}
		return source.Endpoint{Network: "unix", Addr: f.socket}, "-s " + f.socket, true, nil
	case h || p:
		var flags []string
		if h {
			flags = append(flags, "-h "+f.host)
		}
		if p {
			flags = append(flags, "-p "+f.port)
		}
		as := strings.Join(flags, " ")
		ep, err = source.HostPort(f.host, f.port)
		if err != nil {
			return ep, "", false, usageErr("%s: %v", as, err)
		}
		return ep, as, true, nil
	}
	return ep, "", false, nil
}

// explicit is endpoints for a subcommand that writes (load, bench): the
// server must be named, by ADDR or by -h, -p, -s or -u, never taken to be
// 127.0.0.1:6379 by default.
func (a *app) explicit(ctx context.Context, f *connFlags, addrs []string, cmd string) ([]source.Endpoint, error) {
	if len(addrs) == 0 && !f.named() {
		return nil, usageErr("%s writes to a server: name it (ADDR, -h HOST -p PORT, -s SOCKET or -u URI)", cmd)
	}
	return a.endpoints(ctx, f, addrs)
}

// endpoints turns flags and addresses into endpoints: the server -h, -p,
// -s or -u name comes first, then one per ADDR; with none of them,
// 127.0.0.1:6379. A password comes, in order, from -a, the URL, --askpass,
// VALKEYCLI_AUTH, REDISCLI_AUTH. Nothing is dialled here. ctx ends the
// --askpass prompt (ctrl+c).
func (a *app) endpoints(ctx context.Context, f *connFlags, addrs []string) ([]source.Endpoint, error) {
	parsed, err := f.servers(addrs)
	if err != nil {
		return nil, err
	}
	cred := a.credentials(ctx, f, parsed)
	eps := make([]source.Endpoint, 0, len(parsed))
	for _, ep := range parsed {
		if err := cred.Fill(&ep); err != nil {
			return nil, err
		}
		if err := f.apply(&ep); err != nil {
			return nil, err
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

// servers are the servers named, as parsed: -h, -p, -s or -u's first,
// then one per ADDR; with none of them, 127.0.0.1:6379.
func (f *connFlags) servers(addrs []string) ([]source.Endpoint, error) {
	first, as, named, err := f.first()
	if err != nil {
		return nil, err
	}
	n := len(addrs)
	if named {
		n++
	}
	parsed := make([]source.Endpoint, 0, n)
	if named {
		parsed = append(parsed, first)
	}
	for _, s := range addrs {
		ep, err := source.ParseAddress(s)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if named && ep.Network == first.Network && ep.Addr == first.Addr {
			return nil, usageErr("%s and the address %q name the same server: give it once", as, s)
		}
		parsed = append(parsed, ep)
	}
	if len(parsed) == 0 {
		parsed = append(parsed, source.Endpoint{Network: "tcp", Addr: "127.0.0.1:6379"})
	}
	return parsed, nil
}

// credentials give each server the password and user of the flags and
// the environment (source.Credentials); --askpass asks once, naming eps.
// A password on the command line is warned of, once, unless
// --no-auth-warning.
func (a *app) credentials(ctx context.Context, f *connFlags, eps []source.Endpoint) *source.Credentials {
	c := &source.Credentials{Password: f.pass, User: f.user, Getenv: a.getenv}
	if !f.noAuthWarning {
		c.Warn = func() { fmt.Fprintln(a.stderr, passwordWarning) }
	}
	if f.askpass {
		prompt := c.Prompt(eps)
		c.Ask = func() (string, error) {
			p, err := a.readPassword(ctx, prompt)
			fmt.Fprintln(a.stderr)
			if ctx.Err() != nil {
				return "", context.Cause(ctx) // ctrl+c at the prompt
			}
			if err != nil {
				return "", usageErr("--askpass: cannot read a password from the terminal: %v", err)
			}
			return strings.TrimRight(string(p), "\r\n"), nil
		}
	}
	return c
}

// apply sets on ep what the flags say of every server: the database and
// TLS (on when asked, or when a certificate is given or the URL is rediss).
func (f *connFlags) apply(ep *source.Endpoint) error {
	if f.given("db") {
		if f.db < 0 {
			return usageErr("-n %d: a database number is 0 or more", f.db)
		}
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
		return usageErr("--cert and --key go together")
	}
	return nil
}

// keyspaceRefusal turns a *load.KeyspaceError into the usage error (exit
// 2) the user sees, in one line: what is missing and how to preload it.
// bench offers its own --preload, load its default preload (without
// --skip-preload); vkwatch load is the way for every command.
func keyspaceRefusal(err error, own string) error {
	var ke *load.KeyspaceError
	if !errors.As(err, &ke) {
		return err
	}
	cmd := fmt.Sprintf("vkwatch load %s --keys %d --writers 0", ke.Server, ke.Keys)
	if ke.Prefix != load.DefaultPrefix {
		cmd += " --prefix " + ke.Prefix
	}
	switch own {
	case "bench":
		return usageErr("%v: preload it with --preload %d, or first with %s", err, ke.Keys, cmd)
	case "load":
		return usageErr("%v: leave out --skip-preload to preload it", err)
	}
	return usageErr("%v: preload it first with %s", err, cmd)
}
