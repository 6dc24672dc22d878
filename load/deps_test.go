package load

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoReferenceServerDep: the load generator drives any server and
// never imports the reference one (STYLE.md, "load never imports the
// reference server"), not even through another package. The walk reads
// the non-test files' imports, as go list -deps does.
func TestNoReferenceServerDep(t *testing.T) {
	const module = "github.com/tasksim/tasksim"
	seen := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			if rel == "mcp/server" {
				t.Errorf("load depends on %s (imported in %s)", imp, dir)
				continue
			}
			walk(filepath.Join("..", filepath.FromSlash(rel)))
		}
	}
	walk(".")
	if !seen["mcp"] {
		t.Fatalf("the walk found no dependency on %s/mcp: %v", module, seen)
	}
}
