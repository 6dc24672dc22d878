package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// TestRedactFlagsNamedTheSame: every command that writes a trace takes the
// same redaction flags (trace redact used --header, --json-path and
// --pattern where record used --redact-header, --redact-json and
// --redact-regexp). A proxy command, when it exists, is held to it too.
func TestRedactFlagsNamedTheSame(t *testing.T) {
	root := NewCmdRoot(&State{Getenv: func(string) string { return "" }})
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch c.CommandPath() {
		case "tasksim record", "tasksim trace redact", "tasksim proxy":
			cmds = append(cmds, c)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if len(cmds) < 2 {
		t.Fatalf("found %d of record and trace redact", len(cmds))
	}
	for _, c := range cmds {
		for _, name := range []string{"redact-header", "redact-json", "redact-regexp"} {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("%s has no --%s", c.CommandPath(), name)
			}
		}
	}
}

// TestTraceRedactNewFlags: trace redact takes record's flag names.
func TestTraceRedactNewFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shared.trace")
	code, _, stderr := run(t, "", "trace", "redact", "../../traces/testdata/v1.trace", "-o", out,
		"--redact-json", "params.arguments.apiKey", "--redact-regexp", `sk-live-[0-9]+`, "--redact-header", "X-Nothing")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("sk-live-123")) {
		t.Error("the secret is still in the trace")
	}
}
