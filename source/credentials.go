package source

import (
	"fmt"
	"strings"
)

// Credentials give each server its password and user, valkey-cli's way: a
// password from -a, the URL, --askpass (asked once for all), then
// VALKEYCLI_AUTH, REDISCLI_AUTH; a user from --user, the URL, then
// VALKEYCLI_USER.
type Credentials struct {
	Password string // -a: before any other
	User     string // --user: before the URL's and VALKEYCLI_USER
	// Ask reads the password once for every server whose URL has none
	// (--askpass); nil: nobody is asked.
	Ask func() (string, error)
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Warn, when set, is called once, the first time a password comes
	// from the command line (-a or a URL): valkey-cli warns then.
	Warn func()

	warned bool
	asked  *string
}

// Fill gives ep its password and user.
func (c *Credentials) Fill(ep *Endpoint) error {
	if ep.Password != "" {
		c.warn()
	}
	switch {
	case c.Password != "":
		c.warn()
		ep.Password = c.Password
	case ep.Password != "":
	case c.Ask != nil:
		if c.asked == nil {
			pw, err := c.Ask()
			if err != nil {
				return err
			}
			c.asked = &pw
		}
		ep.Password = *c.asked
	case c.Getenv("VALKEYCLI_AUTH") != "":
		ep.Password = c.Getenv("VALKEYCLI_AUTH")
	case c.Getenv("REDISCLI_AUTH") != "":
		ep.Password = c.Getenv("REDISCLI_AUTH")
	}
	ep.Username = c.user(*ep)
	return nil
}

// Asked reports whether Ask has been asked (and answered).
func (c *Credentials) Asked() bool { return c.asked != nil }

func (c *Credentials) warn() {
	if !c.warned && c.Warn != nil {
		c.Warn()
		c.warned = true
	}
}

// user is the ACL user ep connects as: --user, the URL's, then
// VALKEYCLI_USER; empty for the default user.
func (c *Credentials) user(ep Endpoint) string {
	switch {
	case c.User != "":
		return c.User
	case ep.Username != "":
		return ep.Username
	}
	return c.Getenv("VALKEYCLI_USER")
}

// Prompt is --askpass's prompt: the user and the servers the password is
// for (those without one in their URL), as valkey-cli would name them
// (user@host:port, "default" where no user is given), two at most and how
// many more: "Password for default@10.0.0.5:6379 and default@10.0.0.6:6379: ".
func (c *Credentials) Prompt(eps []Endpoint) string {
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
