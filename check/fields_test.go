package check

import (
	"testing"

	"github.com/tasksim/tasksim/traces"
)

// TestTaskFieldsTTLNull: a ttl of null (unlimited) is present, as the
// spec asks; an absent ttl is not. (The TypeScript SDK's server sends
// null; JSON null once read as absent.)
func TestTaskFieldsTTLNull(t *testing.T) {
	for _, tc := range []struct {
		name, task string
		want       Status
	}{
		{"null", `{"taskId":"a","status":"working","createdAt":"2026-11-23T23:06:11.216Z","lastUpdatedAt":"2026-11-23T23:06:11.216Z","ttl":null}`, Pass},
		{"number", `{"taskId":"a","status":"working","createdAt":"2026-11-23T23:06:11.216Z","lastUpdatedAt":"2026-11-23T23:06:11.216Z","ttl":60000}`, Pass},
		{"absent", `{"taskId":"a","status":"working","createdAt":"2026-11-23T23:06:11.216Z","lastUpdatedAt":"2026-11-23T23:06:11.216Z"}`, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wt := decodeTask([]byte(tc.task))
			if wt == nil {
				t.Fatal("not a task")
			}
			c := New(&Options{Rules: []string{"TASK-FIELDS"}})
			c.checkTaskFields(wt, traces.Record{})
			if r, _ := c.Verdict().Result("TASK-FIELDS"); r.Status != tc.want {
				t.Errorf("TASK-FIELDS %s, want %s: %+v", r.Status, tc.want, r.Findings)
			}
		})
	}
}
