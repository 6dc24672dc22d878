package interop

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// tasksScenarios are the official conformance suite's 2026-07-28 tasks
// scenarios (@modelcontextprotocol/conformance 0.2.0-alpha.12, the
// io.modelcontextprotocol/tasks extension) with the status each of their
// checks must end with: every check SUCCESS, but tasks-status-notifications,
// which the suite itself always skips (its harness does not yet listen on
// subscriptions/listen). Every scenario also validates each message
// against the revision's schema (wire-schema-valid). A check missing or
// added fails the test as a wrong status does: the verdict is the whole
// list.
var tasksScenarios = map[string]map[string]string{
	"tasks-lifecycle": success("tasks-sync-tool-call", "sep-2663-result-type-task-on-create",
		"sep-2663-tasks-get-status-working", "sep-2663-tasks-get-status-completed",
		"sep-2663-tool-error-uses-completed-status", "sep-2663-tasks-get-status-failed",
		"sep-2663-cancel-ack-empty-result", "tasks-cancel-terminal-idempotent-ack"),
	"tasks-capability-negotiation": success("tasks-extension-advertised", "sep-2663-tasks-methods-non-declaring",
		"sep-2663-server-rejects-undeclared-client", "tasks-per-request-meta-opt-in"),
	"tasks-wire-fields": success("tasks-wire-field-renames", "tasks-no-early-ttl-expiry",
		"tasks-no-related-task-meta-on-inlined-result"),
	"tasks-request-state-removal": success("tasks-create-result-no-request-state", "tasks-get-detailed-no-request-state"),
	"tasks-mrtr-input": success("sep-2663-tasks-get-status-input-required", "tasks-mrtr-tasks-update-resumes",
		"tasks-mrtr-partial-fulfillment"),
	"tasks-request-headers": success("tasks-headers-tolerate-mcp-method-on-tools-call",
		"sep-2663-routing-headers-accepted-on-tasks-get", "tasks-headers-reject-mismatched-method",
		"sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get"),
	"tasks-dispatch-and-envelope": success("sep-2663-tasks-result-removed-method-not-found", "tasks-removed-tasks-list",
		"tasks-server-directed-creation-no-hint", "sep-2663-legacy-task-param-ignored", "tasks-immediate-result-shortcut",
		"tasks-result-type-complete-on-non-task-responses", "sep-2663-durable-create-strong-consistency",
		"sep-2663-tasks-get-invalid-task-id-32602"),
	"tasks-status-notifications": {"tasks-status-notifications": "SKIPPED"},
	"tasks-required-task-error": success("sep-2663-server-returns-missing-capability-when-required",
		"sep-2663-server-returns-missing-capability-data-shape"),
	"tasks-mrtr-composition": success("sep-2663-mrtr-synchronous-before-task-creation"),
}

// success maps each check id, and wire-schema-valid, to SUCCESS.
func success(ids ...string) map[string]string {
	m := map[string]string{"wire-schema-valid": "SUCCESS"}
	for _, id := range ids {
		m[id] = "SUCCESS"
	}
	return m
}

// conformanceNext returns the entry point of the pinned 0.2.0-alpha.12
// suite (package.json's conformance-next alias) and the Node 22 that runs
// it, or skips the test when the interop packages are not installed.
func conformanceNext(t *testing.T) (node, suite string) {
	t.Helper()
	dir := nodeModules(t)
	node = filepath.Join(dir, ".bin", "node")
	suite = filepath.Join(dir, "conformance-next", "dist", "index.js")
	for _, f := range []string{node, suite} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("TASKSIM_INTEROP") == "require" {
				t.Fatalf("interop packages incomplete (%v): run (cd interop && npm ci)", err)
			}
			t.Skip("conformance 0.2.0-alpha.12 not installed: run (cd interop && npm ci) to enable")
		}
	}
	return node, suite
}

// TestConformanceTasksScenarios runs the official conformance suite's ten
// 2026-07-28 tasks scenarios (0.2.0-alpha.12) against tasksim serve with
// its defaults (both revisions, --tasks tool), one subtest per scenario,
// and asserts the status of every check.
func TestConformanceTasksScenarios(t *testing.T) {
	node, suite := conformanceNext(t)
	url := startServe(t)
	for _, s := range slices.Sorted(maps.Keys(tasksScenarios)) {
		t.Run(s, func(t *testing.T) {
			want := tasksScenarios[s]
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			out := t.TempDir()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", s, "-o", out)
			log, err := cmd.CombinedOutput()
			matches, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
			if len(matches) != 1 {
				t.Fatalf("scenario %s: %d checks.json (suite: %v)\n%s", s, len(matches), err, log)
			}
			raw, rerr := os.ReadFile(matches[0])
			var checks []struct {
				ID           string `json:"id"`
				Status       string `json:"status"`
				ErrorMessage string `json:"errorMessage"`
			}
			if rerr != nil || json.Unmarshal(raw, &checks) != nil {
				t.Fatalf("scenario %s: unreadable checks.json (%v)\n%s", s, rerr, raw)
			}
			got := map[string]string{}
			for _, c := range checks {
				if prev, dup := got[c.ID]; dup && prev != c.Status {
					t.Errorf("check %s: %s and %s", c.ID, prev, c.Status)
				}
				got[c.ID] = c.Status
				if w, ok := want[c.ID]; !ok {
					t.Errorf("check %s: %s, not one this test knows (%s)", c.ID, c.Status, c.ErrorMessage)
				} else if c.Status != w {
					t.Errorf("check %s: %s, want %s: %s", c.ID, c.Status, w, c.ErrorMessage)
				}
			}
			for _, id := range slices.Sorted(maps.Keys(want)) {
				if _, ok := got[id]; !ok {
					t.Errorf("check %s missing; want %s", id, want[id])
				}
			}
			if err != nil {
				t.Errorf("suite exited with %v\n%s", err, log)
			}
		})
	}
}
