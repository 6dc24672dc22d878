package check

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// FuzzCheck feeds arbitrary JSONL traces to the checker: whatever the
// records say, it must never panic, and it judges every record it reads.
func FuzzCheck(f *testing.F) {
	for _, dir := range []string{"pass", "fail"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.jsonl"))
		for _, p := range files[:min(3, len(files))] {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := traces.NewJSONLReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		c := New(nil)
		n := uint64(0)
		for rec, err := range traces.All(r) {
			if err != nil {
				break
			}
			c.Add(rec)
			n++
		}
		v := c.Verdict()
		if v.Records != n {
			t.Fatalf("verdict counts %d records, %d were read", v.Records, n)
		}
		var b bytes.Buffer
		if err := v.WriteText(&b); err != nil {
			t.Fatal(err)
		}
	})
}
