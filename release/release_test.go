package release

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const testVersion = "v9.9.9-releasetest"

// TestDockerfileBuild runs the Dockerfile's build command (the build
// stage's go build, with ${VERSION} and /out replaced) from the
// repository's root, and checks what the image would hold: the binary the
// final stage copies, reporting the version it was built with. The COPY
// sources exist; the ENTRYPOINT is the copied binary. Docker itself is not
// run: this machine has no engine.
func TestDockerfileBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tasksim")
	}
	lines := dockerLines(t, "../Dockerfile")
	var build, entry string
	copied := map[string]string{}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "RUN ") && strings.Contains(l, "go build"):
			build = strings.TrimPrefix(l, "RUN ")
		case strings.HasPrefix(l, "ENTRYPOINT "):
			entry = l
		case strings.HasPrefix(l, "COPY --from=build "):
			f := strings.Fields(l)
			copied[f[2]] = f[3]
		case strings.HasPrefix(l, "COPY "):
			for _, src := range strings.Fields(l)[1 : len(strings.Fields(l))-1] {
				if _, err := os.Stat(filepath.Join("..", src)); err != nil {
					t.Errorf("COPY %s: %v", src, err)
				}
			}
		}
	}
	if build == "" {
		t.Fatal("no go build in the Dockerfile")
	}
	out := t.TempDir()
	cmd := strings.NewReplacer("${VERSION}", testVersion, "/out/", out+"/").Replace(build)
	bin := filepath.Join(out, "tasksim")
	if dst, ok := copied["/out/tasksim"]; !ok || !strings.Contains(entry, dst) {
		t.Errorf("the final stage copies %v and runs %q: not the built binary", copied, entry)
	}
	run(t, "..", "sh", "-c", cmd)
	checkVersion(t, bin)
}

// TestGoreleaserBuild builds with .goreleaser.yaml's flags and ldflags
// ({{.Version}} replaced) for this machine, and checks the binary reports
// the version; the files the config names exist. goreleaser itself is not
// run (not installed; nothing is published).
func TestGoreleaserBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds tasksim")
	}
	b, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	field := func(re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(cfg)
		if m == nil {
			t.Fatalf(".goreleaser.yaml has no %s", re)
		}
		return strings.TrimSpace(m[1])
	}
	main := field(`(?m)^\s+main:\s*(\S+)`)
	ldflags := field(`(?m)^\s+ldflags:\s*\n\s+-\s*(.+)$`)
	dockerfile := field(`(?m)^\s+dockerfile:\s*(\S+)`)
	for _, f := range []string{main, dockerfile} {
		if _, err := os.Stat(filepath.Join("..", f)); err != nil {
			t.Errorf(".goreleaser.yaml names %s: %v", f, err)
		}
	}
	bin := filepath.Join(t.TempDir(), "tasksim")
	ld := strings.ReplaceAll(ldflags, "{{.Version}}", testVersion)
	run(t, "..", "env", "CGO_ENABLED=0", "go", "build", "-trimpath", "-ldflags", ld, "-o", bin, main)
	checkVersion(t, bin)
}

// dockerLines returns a Dockerfile's instructions, continuation lines
// joined, comments left out.
func dockerLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	return out
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, b)
	}
}

func checkVersion(t *testing.T, bin string) {
	t.Helper()
	b, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if !strings.HasPrefix(string(b), "tasksim "+testVersion) {
		t.Errorf("--version %q, want tasksim %s", b, testVersion)
	}
}
