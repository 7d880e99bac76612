package tty

import "strings"

// NeedsASCII reports whether the terminal cannot show braille: TERM=dumb
// (no cursor addressing, no promise of any glyph), or a locale that is
// set and not UTF-8 (LC_ALL, else LC_CTYPE, else LANG, as setlocale reads
// them; "C" and "POSIX" included): the terminal then expects bytes that
// UTF-8 braille would garble. No locale set at all says nothing about the
// terminal (a container's shell, ssh without SendEnv): braille stays, and
// --ascii is there.
func NeedsASCII(getenv func(string) string) bool {
	if getenv("TERM") == "dumb" {
		return true
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return !strings.Contains(v, "utf-8") && !strings.Contains(v, "utf8")
		}
	}
	return false
}
