package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadProfiles: --cpuprofile and --memprofile write Go profiles (a
// gzipped profile.proto) of the run: the CPU profile names its sample
// types, the heap profile the generator's own functions.
func TestLoadProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	code, stdout, stderr := run(t, "", loadArgs("--cpuprofile", cpu, "--memprofile", mem)...)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		file string
		want []string
	}{
		{cpu, []string{"samples", "cpu", "nanoseconds"}},
		{mem, []string{"inuse_space", "alloc_objects", "github.com/tasksim/tasksim/load."}},
	} {
		b := gunzip(t, tc.file)
		for _, w := range tc.want {
			if !bytes.Contains(b, []byte(w)) {
				t.Errorf("%s: the profile lacks %q", filepath.Base(tc.file), w)
			}
		}
	}
}

func gunzip(t *testing.T, name string) []byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: not a gzipped profile: %v", name, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}
