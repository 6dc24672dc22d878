package cli

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestReadmeExamplesRun: the README's command block can be run as written,
// top to bottom. Every file a command reads (report merge and html, trace)
// is written by a line before it, and no line is a stdio recorder at the
// top level, which would wait on the terminal for a client's JSON-RPC (it
// belongs in a client's --server-cmd). Both used to be broken: the merge
// line read a.hlog and b.hlog that nothing made.
func TestReadmeExamplesRun(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "## Use\n\n```\n")
	if !ok {
		t.Fatal("README has no ## Use block")
	}
	block, _, _ = strings.Cut(block, "```")
	made := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "   #")
		cmd, _, _ = strings.Cut(cmd, "  #")
		words, err := splitCommand(cmd)
		if err != nil || len(words) < 2 {
			t.Fatalf("%q: %v", line, err)
		}
		if words[0] != "./tasksim" {
			continue
		}
		args := words[1:]
		if i := slices.Index(args, "--"); args[0] == "record" && i >= 0 && slices.Contains(args[i:], "--stdio") {
			t.Errorf("%q: a stdio recorder at the top level waits on stdin", line)
		}
		var inputs []string
		switch {
		case len(args) > 2 && args[0] == "report":
			inputs = positional(args[2:])
		case len(args) > 2 && args[0] == "trace":
			inputs = positional(args[2:])
		}
		for _, in := range inputs {
			if !made[in] {
				t.Errorf("%q reads %s, which no line before it writes", line, in)
			}
		}
		for i, a := range args[:len(args)-1] {
			if slices.Contains([]string{"-o", "--json", "--hlog", "--html"}, a) {
				made[args[i+1]] = true
			}
		}
		for _, w := range words {
			// A recorder inside a client's quoted --server-cmd.
			if f, ok := strings.CutPrefix(w, "./tasksim record -o "); ok {
				made[strings.Fields(f)[0]] = true
			}
		}
		if args[0] == "report" && args[1] == "html" && !slices.Contains(args, "-o") {
			made[strings.TrimSuffix(args[len(args)-1], ".json")+".html"] = true
		}
	}
}

// positional returns the arguments that are not flags or flag values
// (every flag in the README block takes a value, -o included).
func positional(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			if !strings.Contains(args[i], "=") {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}
