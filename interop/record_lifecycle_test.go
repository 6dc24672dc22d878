package interop

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// recordedRPC is one JSON-RPC message of a trace, from an HTTP body, an SSE
// event or a stdio line.
type recordedRPC struct {
	index  uint64
	dir    traces.Direction
	raw    string
	fields *traces.RPCFields
}

// readRecordedRPC returns the JSON-RPC messages of a trace file, in order.
func readRecordedRPC(t *testing.T, path string) []recordedRPC {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatalf("open trace: %v", err)
	}
	defer r.Close()
	var out []recordedRPC
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatalf("read trace: %v", err)
		}
		if rec.RPC == nil {
			continue
		}
		switch rec.Kind {
		case traces.KindMessage, traces.KindStdioLine:
			out = append(out, recordedRPC{rec.Index, rec.Dir, string(rec.Raw), rec.RPC})
		case traces.KindSSEEvent:
			out = append(out, recordedRPC{rec.Index, rec.Dir, rec.SSE.Data, rec.RPC})
		}
	}
	return out
}

// checkRecordedLifecycle asserts that a trace holds a whole task lifecycle,
// in order: a task-augmented tools/call, its CreateTaskResult (working),
// tasks/get answered with the task's status, the task completed, and
// tasks/result answered with the task's result.
func checkRecordedLifecycle(t *testing.T, path string) {
	t.Helper()
	msgs := readRecordedRPC(t, path)
	// Answers by request id; the clients used here run one session.
	answer := func(req recordedRPC) *recordedRPC {
		for i := range msgs {
			m := msgs[i]
			if m.index > req.index && m.dir == traces.DirServerToClient && m.fields.Type == "response" && m.fields.ID == req.fields.ID {
				return &msgs[i]
			}
		}
		return nil
	}
	var call *recordedRPC
	for i, m := range msgs {
		if m.dir == traces.DirClientToServer && m.fields.Method == "tools/call" && strings.Contains(m.raw, `"task"`) {
			call = &msgs[i]
			break
		}
	}
	if call == nil {
		t.Fatalf("no task-augmented tools/call in the trace (%d messages)", len(msgs))
	}
	created := answer(*call)
	if created == nil || created.fields.TaskID == "" || created.fields.Status != "working" {
		t.Fatalf("tools/call (record %d) has no CreateTaskResult with a working task: %+v", call.index, created)
	}
	task := created.fields.TaskID

	// The task's completion shows in a tasks/get answer or in a
	// notifications/tasks/status; a client that learnt it from the latter
	// may close with a tasks/get still unanswered.
	var gets, completedAt, resultAt uint64
	for _, m := range msgs {
		if m.fields.TaskID != task {
			continue
		}
		if m.dir == traces.DirServerToClient && m.fields.Method == "notifications/tasks/status" && m.fields.Status == "completed" && completedAt == 0 {
			completedAt = m.index
		}
		if m.dir != traces.DirClientToServer {
			continue
		}
		switch m.fields.Method {
		case "tasks/get":
			a := answer(m)
			if a == nil {
				continue
			}
			if a.fields.TaskID != task || a.fields.Status == "" {
				t.Errorf("tasks/get (record %d) answered without the task's status: %+v", m.index, a)
				continue
			}
			gets++
			if a.fields.Status == "completed" && (completedAt == 0 || a.index < completedAt) {
				completedAt = a.index
			}
		case "tasks/result":
			a := answer(m)
			if a == nil || a.fields.TaskID != task || a.fields.ErrorCode != 0 || !strings.Contains(a.raw, `"content"`) {
				t.Errorf("tasks/result (record %d) not answered with the task's result: %+v", m.index, a)
				continue
			}
			resultAt = a.index
		}
	}
	switch {
	case gets == 0:
		t.Error("no tasks/get answered in the trace")
	case completedAt == 0:
		t.Error("neither a tasks/get answer nor a status notification says completed")
	case resultAt == 0:
		t.Error("no tasks/result answer")
	case !(created.index < completedAt && completedAt < resultAt):
		t.Errorf("lifecycle out of order: created %d, completed %d, result %d", created.index, completedAt, resultAt)
	}
}

// checkRecordedTraceShow asserts that `tasksim trace show` prints the lifecycle.
func checkRecordedTraceShow(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, tasksimBinary(t), "trace", "show", path).Output()
	if err != nil {
		t.Fatalf("tasksim trace show: %v\n%s", err, stderrOf(err))
	}
	text := string(out)
	last := -1
	for _, want := range []string{"tools/call", "working", "tasks/get", "completed", "tasks/result"} {
		i := strings.Index(text[last+1:], want)
		if i < 0 {
			t.Errorf("trace show: no %q after offset %d:\n%s", want, last+1, text)
			return
		}
		last += 1 + i
	}
}
