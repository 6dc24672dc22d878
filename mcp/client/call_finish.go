package client

import (
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// finishStreaming ends a complete stream: the merged segments are the
// result.
func (c *call) finishStreaming() {
	c.res.Content = c.seg.content()
	c.res.IsError = c.seg.isError
	c.res.Complete = true
	c.finish(nil)
}

// finishCanonical ends the call with a complete tool result.
func (c *call) finishCanonical(r *mcp.ToolCallResponse) {
	c.res.Content = r.Content
	if c.res.Content == nil {
		c.res.Content = []mcp.ContentBlock{}
	}
	c.res.StructuredContent = r.StructuredContent
	c.res.IsError = r.IsError
	c.res.Complete = true
	c.noteCompletedAt(r.Meta)
	c.par.terminal = true
	c.finish(nil)
}

// noteCompletedAt takes the server's completion time from a final answer's
// meta (mcp.MetaCompletedAt), when it carries one.
func (c *call) noteCompletedAt(m mcp.Meta) {
	if v, ok := m[mcp.MetaCompletedAt].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			c.res.CompletedAt = t
			c.res.CompletedAtSource = CompletedAtMeta
		}
	}
}

// finishIncomplete ends the call with err and what arrived so far.
func (c *call) finishIncomplete(err error) {
	if c.done() {
		return
	}
	c.res.Complete = false
	switch {
	case c.seg != nil && c.seg.received > 0:
		c.res.Content = c.seg.content()
	case len(c.par.content) > 0:
		c.res.Content = c.par.content
	}
	c.finish(err)
}

func (c *call) finish(err error) {
	if !c.to(evEnd) {
		return
	}
	c.err = err
	if c.seg != nil {
		c.res.Segments = c.seg.received
		c.res.Duplicates += c.seg.duplicates
		c.res.Discarded += c.seg.invalid
	}
	c.res.Duplicates += c.par.duplicates
	c.res.Partials = c.par.accepted
	c.res.PartialContent = c.par.content
	c.res.DataLoss = c.par.lost
	c.res.Discarded += c.par.afterTerminal
	if c.res.CompletedAt.IsZero() && c.status.terminal() {
		if t, err := mcp.ParseTime(c.status.last.LastUpdatedAt); err == nil {
			c.res.CompletedAt = t
			c.res.CompletedAtSource = CompletedAtLastUpdated
		}
	}
	e := Event{Kind: EventResult, TaskID: c.taskID, Err: err}
	if c.status.last != nil {
		e.Status = c.status.last.Status
	}
	if c.res.Complete {
		e.Detail = "complete"
	} else {
		e.Detail = "incomplete"
	}
	c.rec.add(e)
	if c.pollTimer != nil {
		c.pollTimer.Stop()
	}
	c.pollC, c.cancelC = nil, nil
}

func progressText(p mcp.ProgressParams) string {
	s := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total != nil {
		s += "/" + strconv.FormatFloat(*p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

func joinInts(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ",")
}
