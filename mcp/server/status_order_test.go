package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// wireLog keeps, in order, what a session hands to its transport: its
// answers (as a Replier) and its notifications (as an Outbox).
type wireLog struct {
	mu   sync.Mutex
	msgs []*mcp.Message
	note chan struct{}
}

func (l *wireLog) add(m *mcp.Message) {
	l.mu.Lock()
	l.msgs = append(l.msgs, m)
	l.mu.Unlock()
	if m.Method == mcp.NotificationTaskStatus {
		close(l.note)
	}
}

func (l *wireLog) Send(_ context.Context, m *mcp.Message) error { l.add(m); return nil }

func (l *wireLog) Reply(_ context.Context, m *mcp.Message, _ bool) error {
	if m != nil {
		l.add(m)
	}
	return nil
}

// TestStatusAfterFirstAnswer: a streamed call whose task ends before its
// first answer (every chunk ready within the immediate window) answers
// once, with isComplete: true, and only then sends the task's completed
// status. Before, the status notification went out as the tool ended,
// ahead of the answer: a client heard a task completed before it knew
// the task, and completed before isComplete: true (SEP-1905, Case 3: "The
// task status MUST remain working until isComplete: true is sent").
func TestStatusAfterFirstAnswer(t *testing.T) {
	srv := New(&Options{ImmediateWindow: time.Hour})
	defer srv.Close()
	log := &wireLog{note: make(chan struct{})}
	ss := srv.NewSession(log).(*session)
	defer ss.Close()
	msg, err := mcp.NewRequest(mcp.IntID(1), mcp.MethodToolsCall, map[string]any{
		"name": ToolSlowText, "arguments": map[string]any{"chunks": 0},
		"task": map[string]any{"responseModes": []string{"streaming"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ss.Handle(context.Background(), msg, log)
	select {
	case <-log.note:
	case <-time.After(10 * time.Second): // only turns a hang into a failure
		t.Fatal("no status notification")
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.msgs) != 2 || log.msgs[0].Method != "" || log.msgs[1].Method != mcp.NotificationTaskStatus {
		var got []string
		for _, m := range log.msgs {
			got = append(got, m.Method+string(m.Result))
		}
		t.Fatalf("wire order %q, want the answer, then the status notification", got)
	}
}
