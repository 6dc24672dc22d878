package server

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// task is the server's record of one task. Its fields after mu are guarded
// by mu; the ones before it never change after creation.
type task struct {
	id           string
	owner        *session
	tool         string
	mode         mcp.ResponseMode
	createdAt    time.Time
	ttl          time.Duration
	pollInterval time.Duration
	// partial: send SEP-2679 partial notifications for this task.
	partial       bool
	progressToken json.RawMessage
	cancelRun     context.CancelFunc
	done          chan struct{} // closed on reaching a terminal status
	firstEmit     chan struct{} // closed when the first segment is produced

	mu            sync.Mutex
	status        mcp.TaskStatus
	statusMessage string
	updatedAt     time.Time
	completedAt   time.Time
	segments      []mcp.Segment // every emitted block, seqNr from 1
	// segmentMeta is the related-task _meta of every streamed segment's
	// response, made once and never changed (encoded, not kept, by each).
	segmentMeta mcp.Meta
	tail        []mcp.ContentBlock // content carried by no segment
	structured  json.RawMessage
	rpcErr      *mcp.Error // the underlying request ended in this JSON-RPC error
	nextSeq     int64      // next SEP-2679 seq
	expired     bool
	// charged is what the task has taken from its session's and the
	// server's budgets; used is what its result holds (budget.go).
	charged, used int64
	expiry        clock.Timer
	// stream is the open SEP-1905 streaming answer of the creating request;
	// nil once its final response was sent (or in other modes).
	stream   mcp.Replier
	streamID mcp.ID
	// request is the creating request's answer while it is still open, for
	// routing progress notifications.
	request mcp.Replier
	// answered: the creating request's first answer was sent. Until then
	// a terminal status notification is held (statusHeld) and sent once
	// it is: a client never hears of a task's end before the answer
	// that names the task, and a streamed call's completed never comes
	// before the response with isComplete: true (SEP-1905, Case 3: "The
	// task status MUST remain working until isComplete: true is sent").
	// Guarded by statusMu, not mu: the creating request's handler marks
	// its answer while the tool may hold mu in a send.
	statusMu             sync.Mutex
	answered, statusHeld bool
}

// ids makes task ids from one reader, which need not be safe for
// concurrent use, or with make (Options.TaskIDs) when set.
type ids struct {
	mu   sync.Mutex
	r    io.Reader
	make func() (string, error)
}

// next returns a version 4 UUID made of 16 bytes of the reader. With the
// default reader, crypto/rand, that is 122 random bits (2025-11-25 Tasks,
// "Security Considerations": cryptographically secure ids with enough
// entropy to prevent guessing); crypto/rand never fails. A seeded reader
// gives the same ids in the same order (Options.Rand).
func (g *ids) next() (string, error) {
	if g.make != nil {
		id, err := g.make()
		if err != nil {
			return "", fmt.Errorf("task id: %w", err)
		}
		return id, nil
	}
	var b [16]byte
	g.mu.Lock()
	_, err := io.ReadFull(g.r, b[:])
	g.mu.Unlock()
	if err != nil {
		return "", fmt.Errorf("task id: %w", err)
	}
	return formatUUIDv4(b), nil
}

// formatUUIDv4 sets the version and variant bits of b (RFC 9562, section
// 5.4) and returns it in the 8-4-4-4-12 hex form.
func formatUUIDv4(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// snapshotLocked returns the wire form of the task. mu must be held.
func (t *task) snapshotLocked() mcp.Task {
	ttl := t.ttl.Milliseconds()
	poll := t.pollInterval.Milliseconds()
	return mcp.Task{
		TaskID:        t.id,
		Status:        t.status,
		StatusMessage: t.statusMessage,
		CreatedAt:     mcp.FormatTime(t.createdAt),
		LastUpdatedAt: mcp.FormatTime(t.updatedAt),
		TTL:           &ttl,
		PollInterval:  &poll,
	}
}

func (t *task) snapshot() mcp.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshotLocked()
}

// contentLocked is the task's canonical content: its segments in seqNr order
// without seqNr, then the tail (SEP-1905, "tasks/result Operation").
func (t *task) contentLocked() []mcp.ContentBlock {
	out := mcp.MergeSegments(t.segments)
	return append(out, t.tail...)
}

// resultLocked is what the underlying tools/call would have returned, with
// the related-task meta (2025-11-25 Tasks, "Result Retrieval") and the
// completion time tasksim reports for discovery-delay measurement.
func (t *task) resultLocked() (*mcp.CallToolResult, *mcp.Error) {
	if t.rpcErr != nil {
		return nil, t.rpcErr
	}
	meta := mcp.Meta{}.WithRelatedTask(t.id)
	if !t.completedAt.IsZero() {
		meta[mcp.MetaCompletedAt] = t.completedAt.UTC().Format(time.RFC3339Nano)
	}
	content := t.contentLocked()
	if content == nil {
		content = []mcp.ContentBlock{}
	}
	return &mcp.CallToolResult{
		Content:           content,
		StructuredContent: t.structured,
		IsError:           t.status == mcp.StatusFailed || t.status == mcp.StatusCancelled,
		Meta:              meta,
	}, nil
}

// segmentsLocked returns every segment so far: what the first response
// of a stream carries.
func (t *task) segmentsLocked() []mcp.Segment { return slices.Clone(t.segments) }

// segmentsAfterLocked returns the segments with seqNr > last.
func (t *task) segmentsAfterLocked(last int64) []mcp.Segment {
	i, _ := slices.BinarySearchFunc(t.segments, last+1, func(s mcp.Segment, n int64) int { return cmp.Compare(s.SeqNr, n) })
	return slices.Clone(t.segments[i:])
}
