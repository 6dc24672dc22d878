package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// trace export X -o X must refuse, as redact and import do, rather than
// destroy X (Hardening item 9).
func TestTraceExportRefusesItsInput(t *testing.T) {
	path := writeSampleTrace(t, false)
	before, _ := os.ReadFile(path)
	for _, format := range []string{"jsonl", "har"} {
		t.Run(format, func(t *testing.T) {
			code, _, stderr := run(t, "", "trace", "export", path, "--format", format, "-o", path)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			oneErrorLine(t, stderr, "is the input file")
			after, err := os.ReadFile(path)
			if err != nil || string(after) != string(before) {
				t.Errorf("the input changed (%d bytes before, %d after, %v)", len(before), len(after), err)
			}
		})
	}
}

// A command that fails leaves an -o file it did not create as it was
// (Hardening item 10). These fail while writing, after the output was
// opened: before the fix each truncated the file, then deleted it.
func TestFailedWriteKeepsExistingOutput(t *testing.T) {
	stdioTrace := writeSampleTrace(t, true)
	corrupt := variant(t, writeSampleTrace(t, false), func(b []byte) []byte { b[len(b)-3] ^= 1; return b })
	cases := []struct {
		name string
		args func(out string) []string
	}{
		{"export har of a stdio trace", func(out string) []string {
			return []string{"trace", "export", stdioTrace, "--format", "har", "-o", out}
		}},
		{"redact a corrupt trace", func(out string) []string { return []string{"trace", "redact", corrupt, "-o", out} }},
		{"import bad JSONL", func(out string) []string { return []string{"trace", "import", "-o", out} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "precious")
			if err := os.WriteFile(out, []byte("keep me"), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := run(t, "{\"header\":{}}\nnot json\n", tc.args(out)...)
			if code == ExitOK {
				t.Fatalf("exit 0, want a failure; stderr %q", stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil || string(b) != "keep me" {
				t.Errorf("the existing output is %q (%v), want it untouched", b, err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d files left in the directory, want 1 (no temporary file)", len(ents))
			}
		})
	}
}

// A successful write replaces the output whole and keeps its mode.
func TestOutputReplacesOnSuccess(t *testing.T) {
	path := writeSampleTrace(t, false)
	dir := t.TempDir()
	out := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(out, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "trace", "export", path, "-o", out); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Size() < 100 || fi.Mode().Perm() != 0o640 {
		t.Errorf("output %v, %v: want the export with mode 0640", fi, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1", len(ents))
	}
}

// Outputs are opened write-only (Hardening item 11): a read-write
// descriptor of a pipe holds its read end, so a writer whose reader went
// away blocks forever instead of failing with EPIPE.
func TestOutputsOpenWriteOnly(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	pipePath := "/proc/self/fd/" + strconv.Itoa(int(w.Fd()))
	if _, err := os.Stat(pipePath); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	accmode := func(f *os.File) int {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_GETFL, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		return int(flags) & syscall.O_ACCMODE
	}
	o, err := createOut(pipePath)
	if err != nil {
		t.Fatal(err)
	}
	if m := accmode(o.File); m != syscall.O_WRONLY {
		t.Errorf("pipe output opened with access mode %d, want O_WRONLY", m)
	}
	if err := o.commit(); err != nil {
		t.Errorf("commit on a pipe: %v", err)
	}
	if o.tmp != "" {
		t.Errorf("a pipe was written through a temporary file %s", o.tmp)
	}

	tr, err := createTraceFile(filepath.Join(t.TempDir(), "r.trace"), traces.Header{Command: []string{"test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := accmode(tr.f); m != syscall.O_WRONLY {
		t.Errorf("record's trace opened with access mode %d, want O_WRONLY", m)
	}
	if err := tr.Close(); err != nil {
		t.Error(err)
	}

}

// A directory is bad input (exit 2), not an I/O failure (Hardening item 14).
func TestDirectoryInputIsUsageError(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	cases := [][]string{
		{"trace", "import", dir, "-o", out},
		{"report", "merge", "-o", out, dir},
		{"report", "html", "-o", out, dir},
		{"trace", "show", dir},
		{"trace", "verify", dir},
	}
	for _, args := range cases {
		t.Run(args[0]+" "+args[1], func(t *testing.T) {
			code, _, stderr := run(t, "", args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			oneErrorLine(t, stderr, "directory")
		})
	}
}
