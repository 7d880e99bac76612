package tty

import "testing"

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
		if got := NeedsASCII(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}
