package record

import (
	"net/url"
	"strings"

	"github.com/vkwatch/vkwatch/source"
)

// Recordings get shared (attached to issues, pasted into chats), so nothing
// in one may carry a password, even when a caller slips: addresses lose the
// password of their userinfo, settings whose key names a secret are dropped
// and commands that carry a secret are masked.

// secretWords mark a setting key as a secret.
var secretWords = []string{"pass", "secret", "token", "auth", "credential", "key_file", "keyfile"}

func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// redactAddr strips a password from a URL-shaped address; anything else is
// returned as is.
func redactAddr(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		// Unparseable but shaped like user:pass@host: keep only the host part.
		return s[strings.LastIndex(s, "@")+1:]
	}
	if u.User == nil {
		return s
	}
	if _, has := u.User.Password(); has {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// redactCommand masks the arguments of commands that carry a secret:
// AUTH, HELLO ... AUTH, CONFIG SET of a password-like setting, MIGRATE ... AUTH.
func redactCommand(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return cmd
	}
	switch strings.ToUpper(f[0]) {
	case "AUTH":
		return f[0] + " ***"
	case "HELLO", "MIGRATE":
		for i := 1; i < len(f); i++ {
			u := strings.ToUpper(f[i])
			if u == "AUTH" || u == "AUTH2" {
				return strings.Join(f[:i+1], " ") + " ***"
			}
		}
	case "CONFIG", "ACL":
		for i := 1; i < len(f); i++ {
			if secretKey(f[i]) || strings.HasPrefix(f[i], ">") || strings.HasPrefix(f[i], "#") {
				return strings.Join(f[:i+1], " ") + " ***"
			}
		}
	}
	return cmd
}

func cleanHeader(h Header) Header {
	h.Format, h.Version = FormatName, Version
	if h.Settings != nil {
		s := make(map[string]string, len(h.Settings))
		for k, v := range h.Settings {
			if secretKey(k) {
				continue
			}
			s[k] = redactAddr(v)
		}
		h.Settings = s
	}
	servers := make([]ServerInfo, len(h.Servers))
	for i, si := range h.Servers {
		si.Addr = redactAddr(si.Addr)
		if si.Identity != nil {
			id := *si.Identity
			id.Addr = redactAddr(id.Addr)
			si.Identity = &id
		}
		servers[i] = si
	}
	h.Servers = servers
	return h
}

// clean returns ev with any secret masked; the caller's structs are not
// modified (they are shared with the UI).
func clean(ev source.Event) source.Event {
	if ev.Identity != nil && strings.Contains(ev.Identity.Addr, "@") {
		id := *ev.Identity
		id.Addr = redactAddr(id.Addr)
		ev.Identity = &id
	}
	if ev.Command != nil {
		if c := redactCommand(ev.Command.Command); c != ev.Command.Command {
			cr := *ev.Command
			cr.Command = c
			ev.Command = &cr
		}
	}
	if ev.Report != nil && strings.Contains(ev.Report.Addr, "@") {
		r := *ev.Report
		r.Addr = redactAddr(r.Addr)
		ev.Report = &r
	}
	return ev
}
