package mcp_test

import (
	"slices"
	"testing"

	"github.com/tasksim/tasksim/mcp"
)

// TestListsAreTheCallersOwn: a caller that overwrites a list the package
// gave it changes nothing the package, or the next caller, sees.
func TestListsAreTheCallersOwn(t *testing.T) {
	assertOwnCopy(t, "SupportedProtocolVersions", mcp.SupportedProtocolVersions)
	assertOwnCopy(t, "LoggingLevels", mcp.LoggingLevels)
	assertOwnCopy(t, "AllModes", mcp.AllModes)
	if !mcp.IsSupportedProtocolVersion(mcp.LatestProtocolVersion) || !mcp.LoggingLevel("debug").IsValid() || !mcp.ModeTask.IsValid() {
		t.Error("a list overwritten by a caller changed what the package accepts")
	}
}

func assertOwnCopy[S ~[]E, E comparable](t *testing.T, name string, list func() S) {
	t.Helper()
	want := slices.Clone(list())
	clear(list())
	if got := list(); len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("%s after a caller cleared its copy: %v, want %v", name, got, want)
	}
}
