package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
)

// The tests in this file run every call mode against the reference
// server, over every transport in dialers.

var fastPolls = &server.Options{PollInterval: 10 * time.Millisecond}

func slowText(n int) map[string]any {
	return map[string]any{"chunks": n, "chunkSize": 16, "intervalMs": 5}
}

func TestHandshake(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		init := sess.InitializeResult()
		if init.ProtocolVersion != mcp.LatestProtocolVersion {
			t.Errorf("protocol version %q, want %q", init.ProtocolVersion, mcp.LatestProtocolVersion)
		}
		if !init.Capabilities.Tasks.PartialStreaming() || len(init.Capabilities.Tasks.ResponseModes()) != 3 {
			t.Errorf("server capabilities %+v", init.Capabilities.Tasks)
		}
		tools, err := sess.ListTools(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range tools {
			names[tool.Name] = true
		}
		for _, want := range []string{server.ToolSlowText, server.ToolInstant, server.ToolSleep, server.ToolTaskOnly, server.ToolEcho} {
			if !names[want] {
				t.Errorf("tools/list lacks %s", want)
			}
		}
		if err := sess.Ping(testContext(t)); err != nil {
			t.Errorf("ping: %v", err)
		}
	})
}

func TestModePlain(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolEcho, Args: map[string]int{"a": 1}, Mode: client.ModePlain})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerPlain || !res.Complete || res.TaskID != "" {
			t.Errorf("answer %q complete %v task %q", res.Answer, res.Complete, res.TaskID)
		}
		wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock(`{"a":1}`)})
		if count(res.Timeline, client.EventRequestSent, mcp.MethodToolsCall) != 1 || count(res.Timeline, client.EventResult, "") != 1 {
			t.Errorf("timeline %+v", res.Timeline)
		}
	})
}

func TestModePlainTaskRequired(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolTaskOnly, Mode: client.ModePlain})
		var rpc *mcp.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeMethodNotFound {
			t.Fatalf("err %v, want a -32601 error", err)
		}
		if res == nil || res.Complete {
			t.Fatalf("result %+v, want an incomplete one", res)
		}
	})
}

// SEP-1905 scenario 1 from the client's side, and tasks/result of the
// task created for tracking returns the same result ("Case 1"). On the
// bubble's clock: the result is ready only if the tool's goroutine ends
// before the server's immediate window (20 ms) runs out, and on the wall
// clock a loaded machine may run the window's timer first, which makes
// the server fall back to task mode (scenario 8).
func TestModeImmediate(t *testing.T) {
	forEachBubbleTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		ctx := testContext(t)
		res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolInstant, Args: map[string]string{"text": "now"}, Mode: client.ModeImmediate})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerImmediate || res.TaskID == "" || !res.Complete {
			t.Fatalf("answer %q task %q complete %v", res.Answer, res.TaskID, res.Complete)
		}
		wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock("now")})
		again, err := sess.TaskResult(ctx, res.TaskID, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantContent(t, again.Content, res.Content)
		if res.CompletedAt.IsZero() {
			t.Error("no completion time from the result's meta")
		}
	})
}

// A call negotiated as immediate whose result is not ready falls back to
// task mode (SEP-1905 scenario 8); the client follows. The server's
// immediate window (20 ms) against a 60 ms tool, on the bubble's clock: on
// the wall clock a loaded machine could run the tool before the window's
// timer.
func TestModeImmediateFallsBackToTask(t *testing.T) {
	forEachBubbleTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, fastPolls, nil)
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSleep, Args: map[string]any{"durationMs": 60, "text": "slept"}, Mode: client.ModeImmediate})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerTask || !res.Complete {
			t.Fatalf("answer %q complete %v", res.Answer, res.Complete)
		}
		if took := res.End.Sub(res.Start); took < 60*time.Millisecond {
			t.Errorf("the call took %v, less than the tool's 60ms", took)
		}
		wantContent(t, res.Content, []mcp.ContentBlock{mcp.TextBlock("slept")})
	})
}

// SEP-1905 scenario 2: CreateTaskResult, polling, tasks/result.
func TestModeTask(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, fastPolls, &client.Options{NoPartial: true})
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: slowText(4), Mode: client.ModeTask})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerTask || !res.Complete || res.IsError {
			t.Fatalf("answer %q complete %v isError %v", res.Answer, res.Complete, res.IsError)
		}
		wantContent(t, res.Content, chunks(4, 16))
		if res.Task == nil || res.Task.Status != mcp.StatusCompleted {
			t.Errorf("task %+v, want completed", res.Task)
		}
		if count(res.Timeline, client.EventRequestSent, mcp.MethodTasksResult) != 1 {
			t.Errorf("want one tasks/result, timeline %+v", res.Timeline)
		}
		if res.CompletedAt.IsZero() || res.CompletedAt.Before(res.Start.Add(-time.Second)) {
			t.Errorf("completed at %v", res.CompletedAt)
		}
	})
}

func TestModePoll(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		// The server suggests polling every 10 s; the override wins.
		sess := dial(t, &server.Options{PollInterval: 10 * time.Second}, &client.Options{NoPartial: true})
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: slowText(3), Mode: client.ModePoll, PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		wantContent(t, res.Content, chunks(3, 16))
		if n := count(res.Timeline, client.EventRequestSent, mcp.MethodTasksGet); n < 1 {
			t.Errorf("%d tasks/get polls, want some", n)
		}
		for _, e := range res.Timeline {
			if e.Kind == client.EventStatus && e.Source == client.SourceNotification {
				t.Logf("status notification recorded, not acted on: %v", e.Status)
			}
		}
	})
}

// SEP-1905 scenarios 4 and 5 against the reference server: the segments of
// the initial response and the later responses with the same id.
func TestModeStreaming(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, &client.Options{NoPartial: true})
		var order []int64
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: slowText(6), Mode: client.ModeStreaming,
			OnSegment: func(s mcp.Segment) { order = append(order, s.SeqNr) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerStreaming || !res.Complete || res.IsError {
			t.Fatalf("answer %q complete %v isError %v", res.Answer, res.Complete, res.IsError)
		}
		wantContent(t, res.Content, chunks(6, 16))
		if res.Segments != 6 || res.Duplicates != 0 || res.Gaps != 0 || res.Resumes != 0 {
			t.Errorf("segments %d duplicates %d gaps %d resumes %d", res.Segments, res.Duplicates, res.Gaps, res.Resumes)
		}
		for i, n := range order {
			if n != int64(i+1) {
				t.Fatalf("segments delivered in order %v", order)
			}
		}
		if res.Task == nil || res.Task.Status != mcp.StatusCompleted {
			t.Errorf("task %+v", res.Task)
		}
		// The canonical result equals the merged stream (S1905-MERGE).
		canon, err := sess.TaskResult(testContext(t), res.TaskID, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantContent(t, canon.Content, res.Content)
	})
}

// SEP-1905 scenario 11 against the reference server.
func TestModeStreamingFailure(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		args := slowText(5)
		args["failAfter"] = 2
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: args, Mode: client.ModeStreaming})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || !res.IsError || res.Task == nil || res.Task.Status != mcp.StatusFailed {
			t.Fatalf("complete %v isError %v task %+v", res.Complete, res.IsError, res.Task)
		}
		want := append(chunks(2, 16), mcp.TextBlock("slow_text failed after 2 chunks, as asked"))
		wantContent(t, res.Content, want)
	})
}

// SEP-1905 scenario 10 against the reference server: a chunk every 10 ms,
// cancelled at 45 ms of the bubble's clock. The stream stops with the
// chunks made by then and a final response (isComplete), the task
// cancelled.
func TestModeStreamingCancel(t *testing.T) {
	forEachBubbleTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		args := map[string]any{"chunks": 1000, "chunkSize": 8, "intervalMs": 10}
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: args, Mode: client.ModeStreaming, CancelAfter: 45 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.Task == nil || res.Task.Status != mcp.StatusCancelled || !res.Complete {
			t.Fatalf("task %+v complete %v", res.Task, res.Complete)
		}
		if count(res.Timeline, client.EventRequestSent, mcp.MethodTasksCancel) != 1 {
			t.Errorf("want one tasks/cancel")
		}
		if res.Segments != 4 {
			t.Errorf("%d segments, want the 4 chunks made in the 45 ms before the cancel", res.Segments)
		}
		wantContent(t, res.Content, chunks(res.Segments, 8))
	})
}

// A task cancelled at 20 ms of the bubble's clock, an hour before its tool
// would end: the task is cancelled, the result says so.
func TestModeTaskCancel(t *testing.T) {
	forEachBubbleTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, fastPolls, nil)
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSleep, Args: map[string]any{"durationMs": 3_600_000}, Mode: client.ModeTask, CancelAfter: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if res.Task == nil || res.Task.Status != mcp.StatusCancelled || !res.Complete || !res.IsError {
			t.Fatalf("task %+v complete %v isError %v", res.Task, res.Complete, res.IsError)
		}
		if count(res.Timeline, client.EventRequestSent, mcp.MethodTasksCancel) != 1 {
			t.Errorf("want one tasks/cancel")
		}
	})
}

// SEP-2679 partial notifications, then tasks/result as the canonical
// result (§1.3 rule 6).
func TestModePartial(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		var seqs []int64
		// No poll: a tasks/get seeing the task completed before the last
		// partials were read would end the call early and count them as
		// discarded. The terminal status notification follows every
		// partial on one stream (§1.3 rule 3), so it ends the call.
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: slowText(5), Mode: client.ModePartial,
			PollInterval: time.Hour, OnPartial: func(p mcp.TaskPartialParams) { seqs = append(seqs, p.Seq) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.Answer != client.AnswerTask || !res.Complete {
			t.Fatalf("answer %q complete %v", res.Answer, res.Complete)
		}
		wantContent(t, res.Content, chunks(5, 16))
		wantContent(t, res.PartialContent, chunks(5, 16))
		if res.Partials != 5 || res.DataLoss != 0 || res.Duplicates != 0 || res.Discarded != 0 {
			t.Errorf("partials %d loss %d duplicates %d discarded %d", res.Partials, res.DataLoss, res.Duplicates, res.Discarded)
		}
		for i, s := range seqs {
			if s != int64(i) {
				t.Fatalf("seqs %v, want 0,1,2,...", seqs)
			}
		}
	})
}

// A client that does not declare tasks.streaming.partial gets none
// (SEP-2679 §2.3 rule 1).
func TestModePartialUndeclared(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, fastPolls, &client.Options{NoPartial: true})
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: slowText(3), Mode: client.ModePartial})
		if err != nil {
			t.Fatal(err)
		}
		if res.Partials != 0 {
			t.Errorf("%d partials without the capability", res.Partials)
		}
		wantContent(t, res.Content, chunks(3, 16))
	})
}

// The task's ttl runs out while the client polls: the call ends
// incomplete with ErrTaskExpired (SEP-1905 scenario 9, task mode). The
// 50 ms ttl, the 10 ms polls and the hour-long tool are on the bubble's
// clock, whatever the machine's speed.
func TestModePollTaskExpires(t *testing.T) {
	forEachBubbleTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, &client.Options{NoPartial: true})
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSleep, Args: map[string]any{"durationMs": 60000},
			Mode: client.ModePoll, TTL: 50 * time.Millisecond, PollInterval: 10 * time.Millisecond})
		if !errors.Is(err, client.ErrTaskExpired) || !errors.Is(err, client.ErrTaskNotFound) {
			t.Fatalf("err %v, want ErrTaskExpired", err)
		}
		var te *client.TaskError
		if !errors.As(err, &te) || te.TaskID != res.TaskID || te.Err.Code != mcp.CodeInvalidParams {
			t.Fatalf("err %#v", err)
		}
		if res.Complete {
			t.Error("an expired task's result is complete")
		}
	})
}

// The ttl runs out while streaming: the reference server ends the stream
// with isComplete and isError, and the task failed (SEP-1905, "TTL
// Expiration During Streaming"). On the bubble's clock. The server
// deletes the task when its ttl runs out, and a streaming call whose
// stream is silent for the task's pollInterval (500 ms) asks tasks/get:
// on the wall clock, a loaded machine that delivered the final response
// later than that after the last chunk made the call end with the
// tasks/get's "expired" error instead.
func TestModeStreamingTaskExpires(t *testing.T) {
	forEachBubbleTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, nil, nil)
		args := map[string]any{"chunks": 1000, "chunkSize": 8, "intervalMs": 10}
		res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: args, Mode: client.ModeStreaming, TTL: 60 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if took := res.End.Sub(res.Start); took != 60*time.Millisecond {
			t.Errorf("the stream ended %v after the call (bubble time), want the ttl's 60ms", took)
		}
		if !res.IsError || res.Task == nil || res.Task.Status != mcp.StatusFailed {
			t.Fatalf("isError %v task %+v", res.IsError, res.Task)
		}
		last := res.Content[len(res.Content)-1]
		if last.Text != "Task has expired" {
			t.Errorf("last block %q", last.Text)
		}
		// The server deletes the task right after the final response.
		if got, err := sess.GetTask(testContext(t), res.TaskID); err == nil && got.Status != mcp.StatusFailed || err != nil && !errors.Is(err, client.ErrTaskExpired) {
			t.Errorf("tasks/get after expiry: %+v, %v", got, err)
		}
	})
}

func TestTaskMethods(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, fastPolls, nil)
		ctx := testContext(t)
		res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolInstant, Mode: client.ModeTask})
		if err != nil {
			t.Fatal(err)
		}
		got, err := sess.GetTask(ctx, res.TaskID)
		if err != nil || got.Status != mcp.StatusCompleted {
			t.Fatalf("tasks/get: %+v, %v", got, err)
		}
		list, err := sess.ListTasks(ctx)
		if err != nil || len(list) != 1 || list[0].TaskID != res.TaskID {
			t.Fatalf("tasks/list: %+v, %v", list, err)
		}
		if _, err := sess.CancelTask(ctx, res.TaskID); !errors.Is(err, client.ErrTaskNotFound) || errors.Is(err, client.ErrTaskExpired) {
			t.Errorf("cancelling a completed task: %v, want a -32602 TaskError", err)
		}
		if _, err := sess.GetTask(ctx, "no-such-task"); !errors.Is(err, client.ErrTaskNotFound) {
			t.Errorf("tasks/get of an unknown task: %v", err)
		}
		// lastSeqNr past the end of a completed task: empty and complete.
		r, err := sess.TaskResult(ctx, res.TaskID, 7)
		if err != nil || r.IsComplete == nil || !*r.IsComplete || len(r.PartialContent) != 0 {
			t.Errorf("tasks/result lastSeqNr 7: %+v, %v", r, err)
		}
	})
}

// Concurrent calls on one session each get their own answers.
func TestConcurrentCalls(t *testing.T) {
	forEachTransport(t, func(t *testing.T, dial dialer) {
		sess := dial(t, fastPolls, nil)
		modes := []client.Mode{client.ModeStreaming, client.ModeTask, client.ModePartial, client.ModePoll, client.ModeStreaming, client.ModePlain}
		errs := make(chan error, len(modes))
		for i, m := range modes {
			go func() {
				res, err := sess.CallTool(testContext(t), client.CallOptions{Name: server.ToolSlowText, Args: slowText(3 + i), Mode: m})
				if err == nil && texts(res.Content) != texts(chunks(3+i, 16)) {
					err = errors.New("mode " + string(m) + ": content " + texts(res.Content))
				}
				errs <- err
			}()
		}
		for range modes {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
}
