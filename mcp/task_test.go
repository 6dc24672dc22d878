package mcp_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
)

// TestCanTransition covers all 25 pairs of statuses against 2025-11-25 Tasks
// "Task Status Lifecycle": working and input_required may move to any
// status, terminal statuses to none. Staying in working or input_required
// is allowed too: the package documents it as an update of the status
// message, not a transition.
func TestCanTransition(t *testing.T) {
	const (
		working       = mcp.StatusWorking
		inputRequired = mcp.StatusInputRequired
		completed     = mcp.StatusCompleted
		failed        = mcp.StatusFailed
		cancelled     = mcp.StatusCancelled
	)
	tests := []struct {
		from, to mcp.TaskStatus
		want     bool
	}{
		{working, working, true},
		{working, inputRequired, true},
		{working, completed, true},
		{working, failed, true},
		{working, cancelled, true},

		{inputRequired, working, true},
		{inputRequired, inputRequired, true},
		{inputRequired, completed, true},
		{inputRequired, failed, true},
		{inputRequired, cancelled, true},

		{completed, working, false},
		{completed, inputRequired, false},
		{completed, completed, false},
		{completed, failed, false},
		{completed, cancelled, false},

		{failed, working, false},
		{failed, inputRequired, false},
		{failed, completed, false},
		{failed, failed, false},
		{failed, cancelled, false},

		{cancelled, working, false},
		{cancelled, inputRequired, false},
		{cancelled, completed, false},
		{cancelled, failed, false},
		{cancelled, cancelled, false},

		// Not statuses at all.
		{working, "done", false},
		{"", working, false},
		{"Working", completed, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"->"+string(tt.to), func(t *testing.T) {
			if got := mcp.CanTransition(tt.from, tt.to); got != tt.want {
				t.Errorf("CanTransition(%q, %q) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
}

func TestTaskStatus(t *testing.T) {
	tests := []struct {
		status       mcp.TaskStatus
		wantTerminal bool
		wantValid    bool
	}{
		{status: mcp.StatusWorking, wantTerminal: false, wantValid: true},
		{status: mcp.StatusInputRequired, wantTerminal: false, wantValid: true},
		{status: mcp.StatusCompleted, wantTerminal: true, wantValid: true},
		{status: mcp.StatusFailed, wantTerminal: true, wantValid: true},
		{status: mcp.StatusCancelled, wantTerminal: true, wantValid: true},
		{status: "canceled", wantTerminal: false, wantValid: false},
		{status: "", wantTerminal: false, wantValid: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.status), func(t *testing.T) {
			if got := tt.status.IsTerminal(); got != tt.wantTerminal {
				t.Errorf("IsTerminal() = %v, want %v", got, tt.wantTerminal)
			}
			if got := tt.status.IsValid(); got != tt.wantValid {
				t.Errorf("IsValid() = %v, want %v", got, tt.wantValid)
			}
		})
	}
}

func TestTaskMarshal(t *testing.T) {
	tests := []struct {
		name string
		task mcp.Task
		want string
	}{
		{
			name: "unlimited ttl is null and present, pollInterval omitted",
			task: mcp.Task{TaskID: "t1", Status: mcp.StatusWorking, CreatedAt: "2025-11-25T10:30:00.000Z", LastUpdatedAt: "2025-11-25T10:30:00.000Z"},
			want: `{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00.000Z","lastUpdatedAt":"2025-11-25T10:30:00.000Z","ttl":null}`,
		},
		{
			name: "every member",
			task: mcp.Task{
				TaskID: "786512e2-9e0d-44bd-8f29-789f320fe840", Status: mcp.StatusWorking,
				StatusMessage: "The operation is now in progress.",
				CreatedAt:     "2025-11-25T10:30:00Z", LastUpdatedAt: "2025-11-25T10:40:00Z",
				TTL: ptr(int64(60000)), PollInterval: ptr(int64(5000)),
			},
			want: `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","statusMessage":"The operation is now in progress.","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttl":60000,"pollInterval":5000}`,
		},
		{
			name: "zero ttl and pollInterval are values, not absence",
			task: mcp.Task{TaskID: "t", Status: mcp.StatusCompleted, CreatedAt: "c", LastUpdatedAt: "u", TTL: ptr(int64(0)), PollInterval: ptr(int64(0))},
			want: `{"taskId":"t","status":"completed","createdAt":"c","lastUpdatedAt":"u","ttl":0,"pollInterval":0}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.task)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
			}
			var members map[string]json.RawMessage
			if err := json.Unmarshal(got, &members); err != nil {
				t.Fatal(err)
			}
			ttl, ok := members["ttl"]
			if !ok {
				t.Fatalf("ttl member missing from %s", got)
			}
			wantTTL := "null"
			if tt.task.TTL != nil {
				wantTTL = strconv.FormatInt(*tt.task.TTL, 10)
			}
			if string(ttl) != wantTTL {
				t.Errorf("ttl = %s, want %s", ttl, wantTTL)
			}
			if _, ok := members["pollInterval"]; ok != (tt.task.PollInterval != nil) {
				t.Errorf("pollInterval present = %v, want %v", ok, tt.task.PollInterval != nil)
			}
			var back mcp.Task
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.task, back); diff != "" {
				t.Errorf("round trip mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskUnmarshalSpecExample(t *testing.T) {
	// SEP-1905 "Case 2: Responding with Task".
	in := `{
	  "task": {
	    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
	    "status": "working",
	    "statusMessage": "The operation is now in progress.",
	    "createdAt": "2025-11-25T10:30:00Z",
	    "lastUpdatedAt": "2025-11-25T10:40:00Z",
	    "ttl": 60000,
	    "pollInterval": 5000
	  }
	}`
	var got mcp.CreateTaskResult
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := mcp.CreateTaskResult{Task: mcp.Task{
		TaskID: "786512e2-9e0d-44bd-8f29-789f320fe840", Status: mcp.StatusWorking,
		StatusMessage: "The operation is now in progress.",
		CreatedAt:     "2025-11-25T10:30:00Z", LastUpdatedAt: "2025-11-25T10:40:00Z",
		TTL: ptr(int64(60000)), PollInterval: ptr(int64(5000)),
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateTaskResult mismatch (-want +got):\n%s", diff)
	}
}

func TestFormatTime(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name       string
		in         time.Time
		wantText   string
		wantParsed time.Time
	}{
		{
			name:       "UTC with milliseconds",
			in:         time.Date(2025, 11, 25, 10, 30, 0, 123_000_000, time.UTC),
			wantText:   "2025-11-25T10:30:00.123Z",
			wantParsed: time.Date(2025, 11, 25, 10, 30, 0, 123_000_000, time.UTC),
		},
		{
			name:       "whole seconds keep three digits",
			in:         time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC),
			wantText:   "2025-11-25T10:30:00.000Z",
			wantParsed: time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC),
		},
		{
			name:       "other zones are written in UTC",
			in:         time.Date(2025, 11, 25, 11, 30, 0, 5_000_000, paris),
			wantText:   "2025-11-25T10:30:00.005Z",
			wantParsed: time.Date(2025, 11, 25, 10, 30, 0, 5_000_000, time.UTC),
		},
		{
			name:       "below milliseconds is truncated",
			in:         time.Date(2025, 11, 25, 10, 30, 0, 999_999_999, time.UTC),
			wantText:   "2025-11-25T10:30:00.999Z",
			wantParsed: time.Date(2025, 11, 25, 10, 30, 0, 999_000_000, time.UTC),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := mcp.FormatTime(tt.in)
			if text != tt.wantText {
				t.Errorf("FormatTime = %q, want %q", text, tt.wantText)
			}
			got, err := mcp.ParseTime(text)
			if err != nil {
				t.Fatalf("ParseTime(%q): %v", text, err)
			}
			if !got.Equal(tt.wantParsed) {
				t.Errorf("ParseTime(%q) = %v, want %v", text, got, tt.wantParsed)
			}
			if again := mcp.FormatTime(got); again != text {
				t.Errorf("FormatTime(ParseTime(%q)) = %q", text, again)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    time.Time
		wantErr bool
	}{
		{name: "SEP-1905 example", in: "2025-11-25T10:30:00Z", want: time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)},
		{name: "offset", in: "2025-11-25T12:30:00+02:00", want: time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)},
		{name: "nanoseconds", in: "2025-11-25T10:30:00.123456789Z", want: time.Date(2025, 11, 25, 10, 30, 0, 123456789, time.UTC)},
		{name: "date only", in: "2025-11-25", wantErr: true},
		{name: "no zone", in: "2025-11-25T10:30:00", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseTime(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParseTime(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) {
				t.Errorf("ParseTime(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
