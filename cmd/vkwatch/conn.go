package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/source"
	"github.com/vkwatch/vkwatch/source/fleet"
	"github.com/vkwatch/vkwatch/source/inert"
	"github.com/vkwatch/vkwatch/source/load"
	"github.com/vkwatch/vkwatch/source/watch"
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
	cred := &credentials{ctx: ctx, a: a, f: f}
	cred.prompt = cred.askPrompt(parsed)
	eps := make([]source.Endpoint, 0, len(parsed))
	for _, ep := range parsed {
		if err := cred.fill(&ep); err != nil {
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

// credentials gives each server its password and user, valkey-cli's way:
// a password from -a, the URL, --askpass (asked once for all), then
// VALKEYCLI_AUTH, REDISCLI_AUTH; a user from --user, the URL, then
// VALKEYCLI_USER. A password on the command line is warned of, once,
// unless --no-auth-warning.
type credentials struct {
	ctx    context.Context
	a      *app
	f      *connFlags
	warned bool
	asked  *string
	// prompt is --askpass's question: for whom, on which servers.
	prompt string
}

// askPrompt is --askpass's prompt: the user and the servers the password
// is for (those without one in their URL), as valkey-cli would name them
// (user@host:port, "default" where no user is given), two at most and how
// many more: "Password for default@10.0.0.5:6379 and default@10.0.0.6:6379: ".
func (c *credentials) askPrompt(eps []source.Endpoint) string {
	var who []string
	for _, ep := range eps {
		if ep.Password != "" {
			continue
		}
		user := c.user(ep)
		if user == "" {
			user = "default"
		}
		who = append(who, user+"@"+ep.Addr)
	}
	switch {
	case len(who) == 0:
		return "Password: "
	case len(who) > 2:
		return fmt.Sprintf("Password for %s, %s and %d more: ", who[0], who[1], len(who)-2)
	}
	return "Password for " + strings.Join(who, " and ") + ": "
}

// user is the ACL user ep connects as: --user, the URL's, then
// VALKEYCLI_USER; empty for the default user.
func (c *credentials) user(ep source.Endpoint) string {
	switch {
	case c.f.user != "":
		return c.f.user
	case ep.Username != "":
		return ep.Username
	}
	return c.a.getenv("VALKEYCLI_USER")
}

func (c *credentials) warn() {
	if !c.warned && !c.f.noAuthWarning {
		fmt.Fprintln(c.a.stderr, passwordWarning)
		c.warned = true
	}
}

func (c *credentials) fill(ep *source.Endpoint) error {
	a, f := c.a, c.f
	if ep.Password != "" {
		c.warn()
	}
	switch {
	case f.pass != "":
		c.warn()
		ep.Password = f.pass
	case ep.Password != "":
	case f.askpass:
		if c.asked == nil {
			p, err := a.readPassword(c.ctx, c.prompt)
			fmt.Fprintln(a.stderr)
			if c.ctx.Err() != nil {
				return context.Cause(c.ctx) // ctrl+c at the prompt
			}
			if err != nil {
				return usageErr("--askpass: cannot read a password from the terminal: %v", err)
			}
			pw := strings.TrimRight(string(p), "\r\n")
			c.asked = &pw
		}
		ep.Password = *c.asked
	case a.getenv("VALKEYCLI_AUTH") != "":
		ep.Password = a.getenv("VALKEYCLI_AUTH")
	case a.getenv("REDISCLI_AUTH") != "":
		ep.Password = a.getenv("REDISCLI_AUTH")
	}
	ep.Username = c.user(*ep)
	return nil
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

// reach connects to each server once, as a watcher does, so that a server
// that cannot be reached is the connect exit status, in the monitor's
// words, before any work starts; then warns of a password given to a
// server that has none.
func (a *app) reach(ctx context.Context, eps []source.Endpoint) error {
	clock := source.NewClock()
	var errs []error
	for _, ep := range eps {
		w := watch.New(ep.Node(), ep, clock, watch.Config{ConnectTimeout: defaultConnectTimeout})
		_, err := w.Connect(ctx)
		w.Close()
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return withCode(exitConnect, errors.Join(errs...))
	}
	a.warnNoPassword(ctx, eps)
	return nil
}

// warnNoPassword gives valkey-cli's warning where a password was given to
// a server that asks for none. valkey-cli sends AUTH with the password
// alone; such a server answers "ERR AUTH <password> called without any
// password configured for the default user. Are you sure your
// configuration is correct?", and valkey-cli prints "AUTH failed: " and
// that answer, and goes on. vkwatch authenticates with HELLO's AUTH
// default PASSWORD, which a server without a password (its default user
// nopass) accepts without a word: so it asks each server the way
// valkey-cli does, once, on a connection of its own without credentials,
// after the server answered vkwatch's own. A user named (--user, the URL,
// VALKEYCLI_USER) has a password of its own: nothing to warn of. Only the
// servers given are asked (a cluster's seed, not every node).
func (a *app) warnNoPassword(ctx context.Context, eps []source.Endpoint) {
	for _, ep := range eps {
		if ep.Password == "" || ep.Username != "" {
			continue
		}
		opts, err := watch.RedisOptions(ep)
		if err != nil {
			continue
		}
		opts.Password, opts.DB = "", 0
		opts.DialTimeout, opts.ReadTimeout, opts.MaxRetries = defaultConnectTimeout, defaultConnectTimeout, -1
		c := redis.NewClient(opts)
		err = c.Do(ctx, "AUTH", ep.Password).Err()
		c.Close()
		var rerr redis.Error
		if errors.As(err, &rerr) && strings.Contains(err.Error(), "without any password configured") {
			fmt.Fprintf(a.stderr, "Warning: %s: AUTH failed: %s\n", inert.Text(ep.String()), inert.Text(clip(err.Error(), 300)))
		}
	}
}

// clip cuts what a server said to at most n bytes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// defaultConnectTimeout is --connect-timeout's default, and how long a
// command without it waits for a server at start.
const defaultConnectTimeout = 3 * time.Second

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

// connectFleet finds the fleet's nodes and connects to each, as watch and
// save both begin. One node that answers is enough to go on (the others
// show their error in their place); when none does, the error is every
// node's, with the connect exit status.
func connectFleet(ctx context.Context, f *fleet.Fleet) (source.Topology, []fleet.Connected, error) {
	top, err := f.Start(ctx)
	if err != nil {
		return source.Topology{}, nil, withCode(exitConnect, err)
	}
	conns := f.Connect(ctx)
	var errs []error
	for _, c := range conns {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	if len(errs) == len(conns) {
		return top, conns, withCode(exitConnect, errors.Join(errs...))
	}
	return top, conns, nil
}
