package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Misuse is exit code 2 with a report saying why; the scenarios themselves
// run in ../conformance_client_test.go against the suite's test servers.
func TestRunUsage(t *testing.T) {
	for name, c := range map[string]struct {
		args     []string
		scenario string
	}{
		"no URL":           {nil, "initialize"},
		"unknown scenario": {[]string{"http://127.0.0.1:1/mcp"}, "auth/basic"},
		"no scenario":      {[]string{"http://127.0.0.1:1/mcp"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(c.args, c.scenario, &stdout, &stderr); code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", code, stderr.String())
			}
			if stderr.Len() == 0 {
				t.Error("nothing on stderr")
			}
			if len(c.args) == 0 {
				return
			}
			var rep report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.OK || rep.Error == "" || rep.Scenario != c.scenario {
				t.Errorf("report %q (%v)", stdout.String(), err)
			}
		})
	}
}
