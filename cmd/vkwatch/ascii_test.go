package main

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestNeedsASCII(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"TERM": "xterm-256color", "LANG": "en_US.UTF-8"}, false},
		{map[string]string{"TERM": "dumb", "LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "C"}, true},
		{map[string]string{"LANG": "de_DE.ISO-8859-1"}, true},
		{map[string]string{"LANG": "C", "LC_CTYPE": "C.utf8"}, false},       // LC_CTYPE before LANG
		{map[string]string{"LC_ALL": "POSIX", "LANG": "en_US.UTF-8"}, true}, // LC_ALL first
	} {
		if got := needsASCII(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}

func TestASCIIFlag(t *testing.T) {
	dumb := func(k string) string { return map[string]string{"TERM": "dumb"}[k] }
	for _, c := range []struct {
		args []string
		env  func(string) string
		want bool
	}{
		{nil, dumb, true},
		{nil, func(string) string { return "" }, false},
		{[]string{"--ascii"}, func(string) string { return "" }, true},
		{[]string{"--ascii=false"}, dumb, false},
	} {
		var f asciiFlag
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		registerASCII(fs, &f)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := f.screen(c.env); got != c.want {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
}
