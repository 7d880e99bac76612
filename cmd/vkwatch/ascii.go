package main

import (
	"strconv"

	"github.com/spf13/pflag"

	"github.com/vkwatch/vkwatch/ui/tty"
)

// asciiFlag is --ascii: the screen in ASCII only (charts, bars, borders
// and marks), for terminals and fonts that cannot show braille or UTF-8.
// Not given, vkwatch decides by the terminal (tty.NeedsASCII); --ascii=false
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
	return tty.NeedsASCII(getenv)
}
