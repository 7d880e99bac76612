package main

import (
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// asciiFlag is --ascii: the screen in ASCII only (charts, bars, borders
// and marks), for terminals and fonts that cannot show braille or UTF-8.
// Not given, vkwatch decides by the terminal (needsASCII); --ascii=false
// keeps braille whatever the environment says.
type asciiFlag struct{ on, set bool }

func (f *asciiFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	f.on, f.set = v, true
	return err
}

func (f *asciiFlag) String() string { return strconv.FormatBool(f.on) }

func (f *asciiFlag) Type() string { return "bool" }

// registerASCII adds --ascii to fs.
func registerASCII(fs *pflag.FlagSet, f *asciiFlag) {
	fs.VarPF(f, "ascii", "", "draw the screen in ASCII only: charts, bars and borders without braille or UTF-8 "+
		"(default: on where TERM=dumb or the locale is not UTF-8)").NoOptDefVal = "true"
}

// screen says whether the UI draws in ASCII: as --ascii says, else as the
// terminal needs.
func (f asciiFlag) screen(getenv func(string) string) bool {
	if f.set {
		return f.on
	}
	return needsASCII(getenv)
}

// needsASCII reports whether the terminal cannot show braille: TERM=dumb
// (no cursor addressing, no promise of any glyph), or a locale that is
// set and not UTF-8 (LC_ALL, else LC_CTYPE, else LANG, as setlocale reads
// them; "C" and "POSIX" included): the terminal then expects bytes that
// UTF-8 braille would garble. No locale set at all says nothing about the
// terminal (a container's shell, ssh without SendEnv): braille stays, and
// --ascii is there.
func needsASCII(getenv func(string) string) bool {
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
