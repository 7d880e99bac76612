package source

import (
	"slices"
	"testing"
)

// TestMethodSwitch: only a server that can save both ways is offered the
// switch, to the other method.
func TestMethodSwitch(t *testing.T) {
	for _, tt := range []struct {
		c  SaveConfig
		to string
		ok bool
	}{
		{SaveConfig{Method: "fork", ForklessInfra: Some(true)}, "forkless", true},
		{SaveConfig{Method: "forkless", ForklessInfra: Some(true)}, "fork", true},
		{SaveConfig{Method: "fork", ForklessInfra: Some(false)}, "", false},
		{SaveConfig{Method: "fork"}, "", false},
		{SaveConfig{ForklessInfra: Some(true)}, "", false}, // Redis: no such setting
	} {
		args, to, ok := MethodSwitch(tt.c)
		if to != tt.to || ok != tt.ok || ok && !slices.Equal(args, []string{"CONFIG", "SET", "bgsave-default-method", tt.to}) {
			t.Errorf("MethodSwitch(%+v) = %q %q %v", tt.c, args, to, ok)
		}
	}
}
