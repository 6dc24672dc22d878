package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is the tasksim version: the module's version from the build
// info, unless a release build sets it with -ldflags "-X
// github.com/tasksim/tasksim/internal/cli.Version=v1.2.3". go install
// github.com/tasksim/tasksim/cmd/tasksim@v1.2.3 gives v1.2.3; a build in a
// git checkout with VCS stamping on gives Go's pseudo-version of the commit
// (v0.0.0-20261128012324-09d540427f9d, +dirty with uncommitted changes),
// and --version adds the revision; with stamping off (-buildvcs=false, no
// git, a git worktree) it is "dev" (README, "version"). Only a build that
// has a VCS stamp but no module version gives dev-REVISION[-dirty].
// The same string goes into clientInfo, serverInfo, traces (and so HAR
// exports) and load results.
var Version = ""

// buildInfo is the build's VCS stamp, for --version.
var buildInfo string

func init() {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	v, info := versionFrom(bi)
	if Version == "" {
		Version = v
	}
	buildInfo = info
}

// versionFrom returns the version a build reports and a line about its
// build (revision, time, Go), from its build info (nil: none).
func versionFrom(bi *debug.BuildInfo) (version, info string) {
	if bi == nil {
		return "dev", ""
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev, at, dirty := settings["vcs.revision"], settings["vcs.time"], settings["vcs.modified"] == "true"
	version = bi.Main.Version
	if version == "" || version == "(devel)" {
		version = "dev"
		if rev != "" {
			version += "-" + rev[:min(12, len(rev))]
			if dirty {
				version += "-dirty"
			}
		}
	}
	var parts []string
	if rev != "" {
		r := "revision " + rev
		if dirty {
			r += " (modified)"
		}
		parts = append(parts, r)
	}
	if at != "" {
		parts = append(parts, "committed "+at)
	}
	if bi.GoVersion != "" {
		parts = append(parts, "built with "+bi.GoVersion)
	}
	return version, strings.Join(parts, ", ")
}

// versionTemplate is what tasksim --version prints.
func versionTemplate() string {
	if buildInfo == "" {
		return "tasksim {{.Version}}\n"
	}
	return fmt.Sprintf("tasksim {{.Version}} (%s)\n", buildInfo)
}
