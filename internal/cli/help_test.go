package cli

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpMatchesDocs holds docs/cli.md's command table to the command
// tree cobra builds: a row per command (completion has its own section),
// no row for a command that does not exist, and each subcommand of a
// parent named in its row. A bare parent command names every
// subcommand too: tasksim trace once left out check.
func TestHelpMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `tasksim ([a-z-]+)` \\|(.*)$").FindAllStringSubmatch(string(b), -1) {
		rows[m[1]] = m[2]
	}
	root := NewCmdRoot(&State{Stdout: io.Discard, Stderr: io.Discard})
	names := subcommandNames(root)
	for _, name := range names {
		if name == "completion" {
			if !strings.Contains(string(b), "## Shell completion") {
				t.Error("docs/cli.md has no Shell completion section")
			}
			continue
		}
		if _, ok := rows[name]; !ok {
			t.Errorf("docs/cli.md has no row for tasksim %s", name)
		}
	}
	for name := range rows {
		if !slices.Contains(names, name) {
			t.Errorf("docs/cli.md has a row for tasksim %s, which is no command", name)
		}
	}
	for _, c := range root.Commands() {
		subs := subcommandNames(c)
		if len(subs) == 0 || c.Name() == "completion" {
			continue
		}
		for _, sub := range subs {
			if !regexp.MustCompile("`" + regexp.QuoteMeta(sub) + "[ `]").MatchString(rows[c.Name()]) {
				t.Errorf("docs/cli.md's row for tasksim %s does not name %s", c.Name(), sub)
			}
		}
		code, _, stderr := run(t, "", c.Name())
		if code != ExitUsage {
			t.Errorf("tasksim %s: exit %d, want %d", c.Name(), code, ExitUsage)
		}
		for _, sub := range subs {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(sub) + `\b`).MatchString(stderr) {
				t.Errorf("tasksim %s: %q does not name %s", c.Name(), strings.TrimSpace(stderr), sub)
			}
		}
	}
	if strings.Contains(string(b), "as they come to work") {
		t.Error("docs/cli.md still says commands are added as they come to work")
	}
}

// TestCheckHelpSaysWhereTheProxyGoes: check --server in front of a
// tasksim proxy with faults blames the server for the proxy's faults;
// check --help and docs/ci.md say which tool goes where.
func TestCheckHelpSaysWhereTheProxyGoes(t *testing.T) {
	code, stdout, _ := run(t, "", "check", "--help")
	if code != ExitOK || !strings.Contains(stdout, "not at a tasksim proxy with faults") || !strings.Contains(stdout, "injects its own faults") {
		t.Errorf("check --help (exit %d) does not say where the proxy goes:\n%s", code, stdout)
	}
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "## Which tool goes where") {
		t.Error(`docs/ci.md has no "Which tool goes where"`)
	}
}
