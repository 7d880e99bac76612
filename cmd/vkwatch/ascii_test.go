package main

import (
	"testing"

	"github.com/spf13/pflag"
)

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
