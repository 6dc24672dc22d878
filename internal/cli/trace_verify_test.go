package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/traces"
)

func TestTraceVerify(t *testing.T) {
	path := writeSampleTrace(t, false)
	data, _ := os.ReadFile(path)
	v, _ := traces.Verify(strings.NewReader(string(data)))
	if !v.OK() {
		t.Fatal("sample trace is not whole")
	}
	code, stdout, _ := run(t, "", "trace", "verify", path)
	if code != ExitOK || !strings.Contains(stdout, ": ok; 6 whole records") {
		t.Errorf("whole: exit %d, %q", code, stdout)
	}

	// Cut in the middle of the last record (a killed recorder).
	cut := variant(t, path, func(b []byte) []byte { return b[:len(b)-5] })
	code, stdout, stderr := run(t, "", "trace", "verify", cut)
	if code != ExitFindings || !strings.Contains(stdout, "trace cut at record 5 (byte ") || !strings.Contains(stdout, "5 whole records") {
		t.Errorf("cut: exit %d, stdout %q", code, stdout)
	}
	oneErrorLine(t, stderr, "trace cut at record 5")
	code, stdout, _ = run(t, "", "trace", "verify", cut, "--json")
	var rep struct {
		OK        bool `json:"ok"`
		Records   int  `json:"records"`
		Truncated *struct {
			Index  int   `json:"index"`
			Offset int64 `json:"offset"`
		} `json:"truncated"`
	}
	if code != ExitFindings || json.Unmarshal([]byte(stdout), &rep) != nil || rep.OK || rep.Records != 5 || rep.Truncated == nil ||
		rep.Truncated.Index != 5 || rep.Truncated.Offset != v.Size-lastFrameSize(t, data) {
		t.Errorf("cut --json: exit %d, %+v\n%s", code, rep, stdout)
	}

	// A damaged checksum.
	bad := variant(t, path, func(b []byte) []byte { b[len(b)-3] ^= 1; return b })
	code, stdout, stderr = run(t, "", "trace", "verify", bad)
	if code != ExitFindings || !strings.Contains(stdout, "corrupt trace at record 5") || !strings.Contains(stdout, "checksum mismatch") {
		t.Errorf("corrupt: exit %d, %q", code, stdout)
	}
	oneErrorLine(t, stderr, "checksum mismatch")
}
