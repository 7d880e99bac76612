package main

import (
	"runtime/debug"
	"testing"
)

// TestVersionString covers what each way of building stamps (see
// versionString) and what --version makes of it.
func TestVersionString(t *testing.T) {
	vcs := func(rev, time, modified string) []debug.BuildSetting {
		s := []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "vcs", Value: "git"}}
		if rev != "" {
			s = append(s, debug.BuildSetting{Key: "vcs.revision", Value: rev})
		}
		if time != "" {
			s = append(s, debug.BuildSetting{Key: "vcs.time", Value: time})
		}
		if modified != "" {
			s = append(s, debug.BuildSetting{Key: "vcs.modified", Value: modified})
		}
		return s
	}
	const rev = "9733970e38241b6f0a6c2d5e1f3a4b5c6d7e8f90"
	info := func(version string, settings []debug.BuildSetting) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: settings}
		bi.Main.Path, bi.Main.Version = "github.com/vkwatch/vkwatch", version
		return bi
	}
	tests := []struct {
		name, ldflag string
		bi           *debug.BuildInfo
		ok           bool
		want         string
	}{
		{"go build of a modified clone", "", info("v0.0.0-20261201083935-9733970e3824+dirty", vcs(rev, "2026-12-01T08:39:35Z", "true")), true,
			"v0.0.0-20261201083935-9733970e3824+dirty rev 9733970e3824 (2026-12-01T08:39:35Z, modified), go1.26.8"},
		{"go install at a tag", "", info("v0.1.0", vcs(rev, "2026-12-01T08:39:35Z", "false")), true,
			"v0.1.0 rev 9733970e3824 (2026-12-01T08:39:35Z), go1.26.8"},
		{"go run", "", info("(devel)", nil), true,
			"(devel), no VCS revision stamped (go run, a git worktree or -buildvcs=false), go1.26.8"},
		{"go install module@version", "", info("v0.1.0", nil), true, "v0.1.0, go1.26.8"},
		{"a devel build with a revision", "", info("(devel)", vcs(rev, "", "true")), true,
			"(devel) rev 9733970e3824 (modified), go1.26.8"},
		{"a packager's -X main.version", "1.0-debian1", info("(devel)", vcs(rev, "2026-12-01T08:39:35Z", "false")), true,
			"1.0-debian1 rev 9733970e3824 (2026-12-01T08:39:35Z), go1.26.8"},
		{"no build info", "", nil, false, "(devel), no build info"},
	}
	for _, tt := range tests {
		if got := versionString(tt.ldflag, tt.bi, tt.ok); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
