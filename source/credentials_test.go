package source

import (
	"errors"
	"testing"
)

// TestCredentialsOrder: a password from -a before the URL's, the URL's
// before --askpass, --askpass (asked once for all) before VALKEYCLI_AUTH,
// then REDISCLI_AUTH; a user from --user, the URL, then VALKEYCLI_USER;
// the warning once, and only for a password on the command line.
func TestCredentialsOrder(t *testing.T) {
	env := map[string]string{"VALKEYCLI_AUTH": "vk", "REDISCLI_AUTH": "rc", "VALKEYCLI_USER": "envuser"}
	getenv := func(k string) string { return env[k] }
	url := Endpoint{Network: "tcp", Addr: "a:1", Username: "urluser", Password: "urlpw"}
	bare := Endpoint{Network: "tcp", Addr: "b:2"}
	cases := []struct {
		name           string
		c              Credentials
		ep             Endpoint
		user, password string
		warned         bool
	}{
		{"-a over the URL", Credentials{Password: "flag"}, url, "urluser", "flag", true},
		{"--user over the URL", Credentials{User: "flaguser"}, url, "flaguser", "urlpw", true},
		{"the URL over --askpass", Credentials{Ask: func() (string, error) { return "asked", nil }}, url, "urluser", "urlpw", true},
		{"--askpass over the environment", Credentials{Ask: func() (string, error) { return "asked", nil }}, bare, "envuser", "asked", false},
		{"VALKEYCLI_AUTH", Credentials{}, bare, "envuser", "vk", false},
	}
	for _, c := range cases {
		warns := 0
		c.c.Getenv, c.c.Warn = getenv, func() { warns++ }
		ep := c.ep
		if err := c.c.Fill(&ep); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ep.Username != c.user || ep.Password != c.password || (warns == 1) != c.warned || warns > 1 {
			t.Errorf("%s: user %q password %q, %d warnings; want %q %q, warned %v", c.name, ep.Username, ep.Password, warns, c.user, c.password, c.warned)
		}
	}
	delete(env, "VALKEYCLI_AUTH")
	ep := bare
	if err := (&Credentials{Getenv: getenv}).Fill(&ep); err != nil || ep.Password != "rc" {
		t.Errorf("REDISCLI_AUTH: password %q, %v", ep.Password, err)
	}

	asks, warns := 0, 0
	c := &Credentials{Password: "flag", Getenv: getenv, Warn: func() { warns++ }}
	for range 3 {
		ep := bare
		c.Fill(&ep)
	}
	if warns != 1 {
		t.Errorf("-a for three servers warned %d times, want once", warns)
	}
	c = &Credentials{Getenv: getenv, Ask: func() (string, error) { asks++; return "pw", nil }}
	for range 3 {
		ep := bare
		c.Fill(&ep)
	}
	if asks != 1 || !c.Asked() {
		t.Errorf("--askpass for three servers asked %d times (Asked %v), want once", asks, c.Asked())
	}
	refused := errors.New("no terminal")
	c = &Credentials{Getenv: getenv, Ask: func() (string, error) { return "", refused }}
	if ep := bare; !errors.Is(c.Fill(&ep), refused) || c.Asked() {
		t.Errorf("a failed --askpass is not the error (Asked %v)", c.Asked())
	}
}

// TestCredentialsPrompt names the servers a password is asked for as
// valkey-cli would: those without one in their URL, two at most.
func TestCredentialsPrompt(t *testing.T) {
	c := &Credentials{Getenv: func(string) string { return "" }}
	ep := func(addr, user, pw string) Endpoint {
		return Endpoint{Network: "tcp", Addr: addr, Username: user, Password: pw}
	}
	cases := []struct {
		eps  []Endpoint
		want string
	}{
		{nil, "Password: "},
		{[]Endpoint{ep("a:1", "", "pw")}, "Password: "},
		{[]Endpoint{ep("a:1", "", ""), ep("b:2", "ann", "")}, "Password for default@a:1 and ann@b:2: "},
		{[]Endpoint{ep("a:1", "", ""), ep("b:2", "", "pw"), ep("c:3", "", ""), ep("d:4", "", ""), ep("e:5", "", "")}, "Password for default@a:1, default@c:3 and 2 more: "},
	}
	for _, tc := range cases {
		if got := c.Prompt(tc.eps); got != tc.want {
			t.Errorf("Prompt(%v) = %q, want %q", tc.eps, got, tc.want)
		}
	}
	c.User = "bob"
	if got := c.Prompt([]Endpoint{ep("a:1", "ann", "")}); got != "Password for bob@a:1: " {
		t.Errorf("--user: %q", got)
	}
}
