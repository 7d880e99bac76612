package source

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// defaults of an address that leaves out host or port, as in valkey-cli.
const (
	defaultHost = "127.0.0.1"
	defaultPort = "6379"
)

// TLSOptions are valkey-cli's --tls, --sni, --cacert, --cacertdir, --cert,
// --key and --insecure.
type TLSOptions struct {
	Enabled bool
	// SNI is the server name sent in the handshake and verified against the
	// certificate; empty: the host of the address.
	SNI       string
	CACert    string // PEM file of trusted CAs; empty (and no CACertDir): the system's
	CACertDir string // directory of PEM files of trusted CAs
	Cert      string // client certificate (PEM), with Key
	Key       string
	Insecure  bool // do not verify the server's certificate
}

// Endpoint is where a server listens and how to log in to it.
type Endpoint struct {
	Network  string // "tcp" or "unix"
	Addr     string // host:port, or the socket path
	Username string
	Password string
	DB       int
	TLS      TLSOptions
}

// ParseAddress reads a server address the way users write it for
// valkey-cli: host:port, host, :port, [::1]:port, [::1], a unix socket path
// (anything with a '/' or ending in .sock), or a URL
// redis://[[user:]password@]host[:port][/db] (also rediss://, valkey://,
// valkeys://) or unix://[[user:]password@]/path[?db=N]. As in valkey-cli, a
// URL's user info without a ':' is a password. rediss:// and valkeys://
// enable TLS. A missing host is 127.0.0.1 and a missing port 6379.
//
// Errors are one line, name the input with any password masked and say what
// is wrong.
func ParseAddress(s string) (Endpoint, error) {
	in := strings.TrimSpace(s)
	fail := func(format string, a ...any) (Endpoint, error) {
		return Endpoint{}, fmt.Errorf("address %q: %s", maskAddress(in), fmt.Sprintf(format, a...))
	}
	if in == "" {
		return fail("empty address")
	}
	if strings.ContainsAny(in, " \t\r\n") {
		return fail("contains white space")
	}
	if i := strings.Index(in, "://"); i >= 0 {
		ep, why := parseURL(in, strings.ToLower(in[:i]))
		if why != "" {
			return fail("%s", why)
		}
		return ep, nil
	}
	if strings.Contains(in, "/") || strings.HasSuffix(in, ".sock") {
		return Endpoint{Network: "unix", Addr: in}, nil
	}
	host, port, why := splitHostPort(in)
	if why != "" {
		return fail("%s", why)
	}
	return Endpoint{Network: "tcp", Addr: net.JoinHostPort(host, port)}, nil
}

// HostPort is the endpoint of valkey-cli's -h HOST -p PORT: a TCP address
// whose host and port are checked as ParseAddress checks them. An empty
// host is 127.0.0.1 and an empty port 6379; an IPv6 host may come with or
// without brackets. The error is one line and quotes the bad part.
func HostPort(host, port string) (Endpoint, error) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if host == "" {
		host = defaultHost
	}
	if port == "" {
		port = defaultPort
	}
	if why := checkHost(host); why != "" {
		return Endpoint{}, errors.New(why)
	}
	if why := checkPort(port); why != "" {
		return Endpoint{}, errors.New(why)
	}
	return Endpoint{Network: "tcp", Addr: net.JoinHostPort(host, port)}, nil
}

// splitHostPort splits host:port, host, :port, [v6]:port, [v6] and a bare
// IPv6 literal, filling in defaults. why is empty when the input is good.
func splitHostPort(in string) (host, port, why string) {
	switch {
	case strings.HasPrefix(in, "["):
		end := strings.Index(in, "]")
		if end < 0 {
			return "", "", "missing ']' after IPv6 address"
		}
		host = in[1:end]
		rest := in[end+1:]
		switch {
		case rest == "":
		case strings.HasPrefix(rest, ":"):
			port = rest[1:]
			if port == "" {
				return "", "", "empty port after ':'"
			}
		default:
			return "", "", fmt.Sprintf("unexpected %q after ']'", rest)
		}
		if !isIPv6(host) {
			return "", "", fmt.Sprintf("bad IPv6 address %q", host)
		}
	case strings.Count(in, ":") > 1:
		// A bare IPv6 literal such as ::1 carries no port.
		if !isIPv6(in) {
			return "", "", "bad address (write an IPv6 address with a port as [::1]:6379)"
		}
		host = in
	case strings.Contains(in, ":"):
		i := strings.Index(in, ":")
		host, port = in[:i], in[i+1:]
		if port == "" {
			return "", "", "empty port after ':'"
		}
	default:
		host = in
	}
	if host == "" {
		host = defaultHost
	}
	if port == "" {
		port = defaultPort
	}
	if why := checkHost(host); why != "" {
		return "", "", why
	}
	if why := checkPort(port); why != "" {
		return "", "", why
	}
	return host, port, ""
}

// checkHost accepts an IP address or a host name of letters, digits, '.',
// '-' and '_' (container names have underscores): anything else, such as a
// stray ']' or '@', is a typo that would only fail later as an unknown
// host.
func checkHost(host string) string {
	if isIPv6(host) || hostChars(host) {
		return ""
	}
	return fmt.Sprintf("bad host %q", host)
}

// hostChars reports whether s has only letters, digits, '.', '-' and '_'.
func hostChars(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// isIPv6 reports whether s is an IP address, allowing the zone of a
// link-local IPv6 address (fe80::1%eth0), which net.Dial understands and
// a rediss:// URL may carry as %25eth0.
func isIPv6(s string) bool {
	if ip, zone, ok := strings.Cut(s, "%"); ok {
		return zone != "" && hostChars(zone) && strings.Contains(ip, ":") && net.ParseIP(ip) != nil
	}
	return net.ParseIP(s) != nil
}

func checkPort(port string) string {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strings.HasPrefix(port, "+") {
		return fmt.Sprintf("bad port %q (want 1-65535)", port)
	}
	return ""
}

// parseURL reads a URL address; why is empty when it is good.
func parseURL(in, scheme string) (Endpoint, string) {
	var ep Endpoint
	switch scheme {
	case "redis", "valkey":
		ep.Network = "tcp"
	case "rediss", "valkeys":
		ep.Network = "tcp"
		ep.TLS.Enabled = true
	case "unix":
		ep.Network = "unix"
	default:
		return ep, fmt.Sprintf("unknown scheme %q (want redis://, rediss://, valkey://, valkeys:// or unix://)", scheme)
	}
	u, err := url.Parse(in)
	if err != nil {
		return ep, urlError(err)
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			ep.Username, ep.Password = u.User.Username(), pw
		} else {
			// valkey-cli: redis://secret@host means the password "secret".
			ep.Password = u.User.Username()
		}
	}
	q := u.Query()
	for k := range q {
		if k != "db" {
			return ep, fmt.Sprintf("unknown URL parameter %q (only db is understood)", k)
		}
	}
	if ep.Network == "unix" {
		if u.Host != "" {
			return ep, "a unix:// URL wants an absolute path, as in unix:///run/valkey.sock"
		}
		if u.Path == "" || u.Path == "/" {
			return ep, "empty unix socket path"
		}
		ep.Addr = u.Path
	} else {
		host, port := u.Hostname(), u.Port()
		if strings.HasSuffix(u.Host, ":") {
			return ep, "empty port after ':'"
		}
		if host == "" {
			host = defaultHost
		}
		if port == "" {
			port = defaultPort
		}
		if why := checkHost(host); why != "" {
			return ep, why
		}
		if why := checkPort(port); why != "" {
			return ep, why
		}
		ep.Addr = net.JoinHostPort(host, port)
		switch p := strings.Trim(u.Path, "/"); {
		case p == "":
		case strings.Contains(p, "/"):
			return ep, fmt.Sprintf("bad path %q (want /db, a database number)", u.Path)
		default:
			db, why := parseDB(p)
			if why != "" {
				return ep, why
			}
			ep.DB = db
		}
	}
	if v, ok := q["db"]; ok {
		db, why := parseDB(v[len(v)-1])
		if why != "" {
			return ep, why
		}
		ep.DB = db
	}
	return ep, ""
}

func parseDB(s string) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Sprintf("bad database number %q", s)
	}
	return n, ""
}

// urlError turns a url.Parse error into a short reason. The url package
// quotes the whole input (password and all) in its errors, so only the
// inner error is kept.
func urlError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "invalid port") {
		// `invalid port ":x" after host`
		return "bad port (want 1-65535)"
	}
	return "bad URL: " + msg
}

// maskAddress hides the password of a URL-form address (user info up to the
// '@' of the authority). Addresses without a scheme carry no password.
func maskAddress(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return s
	}
	user := rest[:at]
	if c := strings.Index(user, ":"); c >= 0 {
		user = user[:c+1] + "xxxxx"
	} else {
		user = "xxxxx" // valkey-cli reads a lone user info as a password
	}
	return s[:i+3] + user + rest[at:]
}

// Node is the node id of a server known only by its address: its display
// address (a cluster node's id replaces it once vkwatch learns it).
func (e Endpoint) Node() NodeID { return NodeID(e.String()) }

// String is the display form of the endpoint: the address, with the user
// name, the database and TLS when they are not the defaults. It never
// contains the password.
func (e Endpoint) String() string {
	unix := e.Network == "unix"
	if unix && e.Username == "" && e.DB == 0 && !e.TLS.Enabled {
		return e.Addr
	}
	var b strings.Builder
	switch {
	case unix:
		b.WriteString("unix://")
	case e.TLS.Enabled:
		b.WriteString("rediss://")
	}
	if e.Username != "" {
		b.WriteString(url.PathEscape(e.Username) + "@")
	}
	b.WriteString(e.Addr)
	if e.DB != 0 {
		if unix {
			b.WriteString("?db=")
		} else {
			b.WriteString("/")
		}
		b.WriteString(strconv.Itoa(e.DB))
	}
	return b.String()
}

// host is the host part of a TCP address (no brackets), empty for a socket.
func (e Endpoint) host() string {
	if e.Network == "unix" {
		return ""
	}
	h, _, err := net.SplitHostPort(e.Addr)
	if err != nil {
		return e.Addr
	}
	return h
}

// Local reports whether the server runs on this machine: a unix socket or
// a loopback address (127.0.0.0/8, ::1, localhost). Only then does /proc
// tell anything about it.
func (e Endpoint) Local() bool {
	if e.Network == "unix" {
		return true
	}
	h := e.host()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// TLSConfig is the client TLS configuration of the endpoint's TLS options,
// nil when TLS is off. Unreadable or unusable TLS files are errors that
// name the file and the option. (watch.RedisOptions makes the client's
// options of an endpoint.)
func (e Endpoint) TLSConfig() (*tls.Config, error) {
	if !e.TLS.Enabled {
		return nil, nil
	}
	return e.tlsConfig()
}

// tlsConfig builds the client TLS configuration of the endpoint's TLS
// options (whether or not TLS is enabled).
func (e Endpoint) tlsConfig() (*tls.Config, error) {
	t := e.TLS
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.SNI,
		InsecureSkipVerify: t.Insecure,
	}
	if cfg.ServerName == "" {
		cfg.ServerName = e.host()
	}
	if t.CACert != "" || t.CACertDir != "" {
		pool := x509.NewCertPool()
		if t.CACert != "" {
			pem, err := os.ReadFile(t.CACert)
			if err != nil {
				return nil, fmt.Errorf("--cacert: %s", fileError(err))
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--cacert %s: no PEM certificate in the file", t.CACert)
			}
		}
		if t.CACertDir != "" {
			entries, err := os.ReadDir(t.CACertDir)
			if err != nil {
				return nil, fmt.Errorf("--cacertdir: %s", fileError(err))
			}
			found := false
			for _, ent := range entries {
				if ent.IsDir() {
					continue
				}
				// A CA directory (c_rehash style) also holds links and
				// non-PEM files; read what is readable and count PEMs.
				pem, err := os.ReadFile(filepath.Join(t.CACertDir, ent.Name()))
				if err == nil && pool.AppendCertsFromPEM(pem) {
					found = true
				}
			}
			if !found {
				return nil, fmt.Errorf("--cacertdir %s: no PEM certificate in the directory", t.CACertDir)
			}
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.Cert != "" && t.Key == "":
		return nil, fmt.Errorf("--cert %s given without --key", t.Cert)
	case t.Key != "" && t.Cert == "":
		return nil, fmt.Errorf("--key %s given without --cert", t.Key)
	case t.Cert != "":
		for _, f := range [...]struct{ opt, path string }{{"--cert", t.Cert}, {"--key", t.Key}} {
			if _, err := os.Stat(f.path); err != nil {
				return nil, fmt.Errorf("%s: %s", f.opt, fileError(err))
			}
		}
		pair, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("--cert %s / --key %s: %v", t.Cert, t.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// fileError says why a file could not be read, naming it once.
func fileError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("cannot read %s: %v", pe.Path, pe.Err)
	}
	return err.Error()
}
