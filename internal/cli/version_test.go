package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	stamp := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-11-23T22:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name, main string
		settings   []debug.BuildSetting
		want, info string
	}{
		{"go install @version", "v1.2.3", nil, "v1.2.3", "built with go1.26"},
		{"checkout, pseudo-version", "v0.0.0-20261123220000-0123456789ab+dirty", stamp, "v0.0.0-20261123220000-0123456789ab+dirty",
			"revision 0123456789abcdef0123 (modified), committed 2026-11-23T22:00:00Z, built with go1.26"},
		{"checkout, devel", "(devel)", stamp, "dev-0123456789ab-dirty", "revision 0123456789abcdef0123 (modified)"},
		{"no stamp", "(devel)", nil, "dev", "built with go1.26"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, info := versionFrom(&debug.BuildInfo{GoVersion: "go1.26", Main: debug.Module{Path: "github.com/tasksim/tasksim", Version: tc.main}, Settings: tc.settings})
			if v != tc.want || !strings.Contains(info, tc.info) {
				t.Errorf("versionFrom = %q, %q; want %q and %q", v, info, tc.want, tc.info)
			}
		})
	}
	if v, _ := versionFrom(nil); v != "dev" {
		t.Errorf("no build info: %q", v)
	}
}

// TestVersionFlag: tasksim --version prints the version the traces carry.
func TestVersionFlag(t *testing.T) {
	code, stdout, _ := run(t, "", "--version")
	if code != ExitOK || !strings.HasPrefix(stdout, "tasksim "+Version) {
		t.Errorf("--version: exit %d, %q; want tasksim %s", code, stdout, Version)
	}
}
