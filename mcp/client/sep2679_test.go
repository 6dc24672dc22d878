package client_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// SEP-2679 §1.3 from the client's side, and task-mode edge cases, against
// scripted servers.

func partialNote(seq int64, text string) *mcp.Message {
	return notification(mcp.NotificationTaskPartial, mcp.TaskPartialParams{TaskID: scriptTask, Seq: seq, Content: []mcp.ContentBlock{mcp.TextBlock(text)}})
}

func statusNote(st mcp.TaskStatus) *mcp.Message {
	return notification(mcp.NotificationTaskStatus, mcp.TaskStatusParams{Task: *task(st)})
}

// Notifications for the task arrive before the CreateTaskResult that
// names it; among them a duplicate seq, a gap, a terminal status and a
// partial after it. The client keeps them until it knows the task, then
// applies §1.3: duplicates dropped (rule 10), the gap recorded as data
// loss and not filled (rule 4), the late partial discarded; the result
// is the canonical tasks/result (rule 6), not the partials.
func TestPartialsBeforeTaskDuplicatesGapAfterTerminal(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, p mcp.CallToolParams) {
		if p.Task == nil || !slices.Equal(p.Task.ResponseModes, []mcp.ResponseMode{mcp.ModeTask}) {
			t.Errorf("task params %+v, want responseModes [task]", p.Task)
		}
		w.send("", partialNote(0, "a"))
		w.send("", partialNote(1, "b"))
		w.send("", partialNote(1, "b"))
		w.send("", partialNote(3, "d"))
		w.send("", statusNote(mcp.StatusCompleted))
		w.send("", partialNote(4, "e"))
		w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusWorking)}))
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, last int64) {
		if last != 0 {
			t.Errorf("lastSeqNr %d in task mode", last)
		}
		writeJSON(w, result(id, mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("canonical")},
			Meta: mcp.Meta{mcp.MetaCompletedAt: "2025-11-25T10:30:01.123456789Z"}}))
	}
	sess := s.start(nil)
	var seqs []int64
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "p", Mode: client.ModePartial, PollInterval: time.Hour,
		OnPartial: func(p mcp.TaskPartialParams) { seqs = append(seqs, p.Seq) }})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock("canonical")})
	wantContent(t, res.PartialContent, []mcp.ContentBlock{mcp.TextBlock("a"), mcp.TextBlock("b"), mcp.TextBlock("d")})
	if !slices.Equal(seqs, []int64{0, 1, 3}) || res.Partials != 3 || res.Duplicates != 1 || res.DataLoss != 1 || res.Discarded != 1 {
		t.Errorf("seqs %v partials %d duplicates %d loss %d discarded %d", seqs, res.Partials, res.Duplicates, res.DataLoss, res.Discarded)
	}
	if count(res.Timeline, client.EventRequestSent, mcp.MethodTasksGet) != 0 {
		t.Error("polled although the terminal status was pushed")
	}
	if want := time.Date(2025, 11, 25, 10, 30, 1, 123456789, time.UTC); !res.CompletedAt.Equal(want) {
		t.Errorf("completed at %v, want %v", res.CompletedAt, want)
	}
}

// In poll mode, notifications are recorded but polling decides.
func TestPollModeIgnoresPushedStatus(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", statusNote(mcp.StatusCompleted))
		w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusWorking)}))
	}
	s.get = func(w http.ResponseWriter, id mcp.ID, _ string) { writeJSON(w, result(id, task(mcp.StatusCompleted))) }
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, _ int64) {
		writeJSON(w, result(id, mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("done")}}))
	}
	sess := s.start(&client.Options{NoPartial: true})
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "p", Mode: client.ModePoll, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if count(res.Timeline, client.EventRequestSent, mcp.MethodTasksGet) != 1 {
		t.Errorf("want exactly one tasks/get poll; timeline %+v", res.Timeline)
	}
	wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock("done")})
}

// tasks/get answers -32602 for an expired task: the call ends incomplete
// with a TaskError matching ErrTaskExpired.
func TestTaskModeExpiredOnGet(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusWorking)}))
	}
	s.get = func(w http.ResponseWriter, id mcp.ID, _ string) {
		writeJSON(w, rpcError(id, mcp.CodeInvalidParams, "Failed to retrieve task: Task has expired"))
	}
	sess := s.start(nil)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "p", Mode: client.ModeTask})
	var te *client.TaskError
	if !errors.As(err, &te) || !te.Expired || te.TaskID != scriptTask || te.Method != mcp.MethodTasksGet {
		t.Fatalf("err %v, want an expired TaskError", err)
	}
	if res.Complete || res.TaskID != scriptTask {
		t.Errorf("complete %v task %q", res.Complete, res.TaskID)
	}
}

// A task "not found" is reported expired when its ttl has elapsed by the
// client's clock, here simulated: the task was created at simStart with a
// ttl of 60 s, and tasks/get is answered "not found" once the clock reads
// at.
func TestTaskModeNotFound(t *testing.T) {
	for _, tc := range []struct {
		name    string
		at      time.Duration
		expired bool
	}{
		{"within the ttl", 10 * time.Millisecond, false},
		{"after the ttl", 61 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			clk := newWatchedClock()
			answer, stop := make(chan struct{}), make(chan struct{})
			s := newScript(t)
			s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
				w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusWorking)})) // created at simStart, ttl 60 s
			}
			s.get = func(w http.ResponseWriter, id mcp.ID, _ string) {
				select {
				case <-answer:
				case <-stop:
					return
				}
				writeJSON(w, rpcError(id, mcp.CodeInvalidParams, "Failed to retrieve task: Task not found"))
			}
			sess := s.start(&client.Options{Clock: clk})
			t.Cleanup(func() { close(stop) })
			done := make(chan error, 1)
			go func() {
				_, err := sess.CallTool(ctx, client.CallOptions{Name: "p", Mode: client.ModeTask})
				done <- err
			}()
			clk.await(ctx, t, 10*time.Millisecond) // the poll timer
			clk.Advance(tc.at)                     // the poll at 10 ms, then on to at
			close(answer)
			var err error
			select {
			case err = <-done:
			case <-ctx.Done():
				t.Fatal("the call did not end")
			}
			if !errors.Is(err, client.ErrTaskNotFound) || errors.Is(err, client.ErrTaskExpired) != tc.expired {
				t.Fatalf("err %v: want ErrTaskNotFound, expired %v", err, tc.expired)
			}
		})
	}
}

// A server that falls back to task mode says so; the client follows
// (SEP-1905, "Capability Negotiation").
func TestFallbackToTask(t *testing.T) {
	s := newScript(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusCompleted), Meta: mcp.Meta{mcp.MetaFallbackMode: "task"}}))
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, _ int64) {
		writeJSON(w, result(id, mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("x")}}))
	}
	sess := s.start(nil)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "p", Mode: client.ModeStreaming})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fallback || res.Answer != client.AnswerTask || !res.Complete {
		t.Errorf("fallback %v answer %q complete %v", res.Fallback, res.Answer, res.Complete)
	}
}

// Partials that arrive while the call follows its task, on the standalone
// stream, while the call is idle: the session's reader hands them over
// as it does the task's status notifications, so they keep their order
// with them, so the partial after the terminal
// status is discarded and the two before it are taken.
func TestPartialsWhileFollowingKeepOrderWithStatus(t *testing.T) {
	s := newScript(t)
	answered := make(chan struct{})
	taken := make(chan int64, 4) // OnPartial's, so that the next one finds the call idle
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.send("", result(id, mcp.CreateTaskResult{Task: *task(mcp.StatusWorking)}))
		close(answered)
	}
	s.standalone = func(w *sseWriter, r *http.Request) {
		select {
		case <-answered:
		case <-r.Context().Done():
			return
		}
		for i, text := range []string{"a", "b"} {
			w.send("", partialNote(int64(i), text))
			select {
			case <-taken:
			case <-r.Context().Done():
				return
			}
		}
		w.send("", statusNote(mcp.StatusCompleted))
		w.send("", partialNote(2, "c"))
		<-r.Context().Done()
	}
	s.result = func(w http.ResponseWriter, id mcp.ID, _ string, _ int64) {
		writeJSON(w, result(id, mcp.CallToolResult{Content: []mcp.ContentBlock{mcp.TextBlock("canonical")}}))
	}
	sess := s.start(nil)
	var seqs []int64
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "p", Mode: client.ModePartial, PollInterval: time.Hour,
		OnPartial: func(p mcp.TaskPartialParams) {
			seqs = append(seqs, p.Seq)
			taken <- p.Seq
		}})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock("canonical")})
	wantContent(t, res.PartialContent, []mcp.ContentBlock{mcp.TextBlock("a"), mcp.TextBlock("b")})
	if !slices.Equal(seqs, []int64{0, 1}) || res.Partials != 2 || res.Discarded > 1 || res.DataLoss != 0 {
		t.Errorf("seqs %v partials %d discarded %d loss %d; want 0 and 1 taken, 2 discarded or never seen", seqs, res.Partials, res.Discarded, res.DataLoss)
	}
}
