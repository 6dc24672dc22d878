package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestTraceRedact(t *testing.T) {
	path := writeSampleTrace(t, false)
	out := filepath.Join(t.TempDir(), "shared.trace")
	code, _, stderr := run(t, "", "trace", "redact", path, "-o", out, "--json-path", "params.arguments.password", "--pattern", `t-(\d+)`)
	if code != ExitOK || !strings.Contains(stderr, "redacted 6 records") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, _ := run(t, "", "trace", "export", out)
	if code != ExitOK {
		t.Fatal(code)
	}
	for _, secret := range []string{"tok-secret", "hunter2", "t-77"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("%q survived redaction", secret)
		}
	}
	for _, want := range []string{`["Authorization","[redacted:1]"]`, `\"password\":\"[redacted:2]\"`, `"taskId":"t-[redacted:3]"`, `["redacted","tasksim trace redact"]`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("export lacks %s:\n%s", want, stdout)
		}
	}
	// Redacting again keeps the tokens and numbers new secrets after them.
	out2 := filepath.Join(t.TempDir(), "again.trace")
	if code, _, stderr := run(t, "", "trace", "redact", out, "-o", out2, "--pattern", "slow_text"); code != ExitOK {
		t.Fatalf("again: exit %d: %s", code, stderr)
	}
	_, stdout, _ = run(t, "", "trace", "export", out2)
	if !strings.Contains(stdout, `\"name\":\"[redacted:4]\"`) || !strings.Contains(stdout, `\"password\":\"[redacted:2]\"`) ||
		strings.Count(stdout, `["redacted","tasksim trace redact"]`) != 1 {
		t.Errorf("second redaction:\n%s", stdout)
	}

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no output", []string{"trace", "redact", path}, "-o FILE is required"},
		{"output is input", []string{"trace", "redact", path, "-o", path}, "is the input file"},
		{"bad pattern", []string{"trace", "redact", path, "-o", out2, "--pattern", "("}, "pattern"},
		{"bad path", []string{"trace", "redact", path, "-o", out2, "--json-path", "a[x]"}, "JSON path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage {
				t.Errorf("exit %d", code)
			}
			oneErrorLine(t, stderr, tc.want)
		})
	}
}
