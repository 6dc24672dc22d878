package plant

import (
	"bytes"
	"context"

	"github.com/tasksim/tasksim/mcp"
)

// RepeatSeqNr sends every non-final SEP-1905 streaming response twice on
// its stream: each segment's seqNr repeats (S1905-SEQNR: "seqNr values
// are unique and monotonically increasing"; "Never send the same seqNr
// through multiple mechanisms"). Nothing is lost: a replay after
// Last-Event-ID carries both copies, and no other rule fails.
func RepeatSeqNr(inner mcp.Endpoint) mcp.Endpoint {
	return &endpoint{
		inner: inner,
		reply: func(ctx context.Context, msg *mcp.Message, final bool, next mcp.Replier) error {
			if err := next.Reply(ctx, msg, final); err != nil || final || msg == nil || !isSegmentResponse(msg) {
				return err
			}
			return next.Reply(ctx, msg, false)
		},
	}
}

// isSegmentResponse reports whether msg is a response carrying SEP-1905
// partial-content.
func isSegmentResponse(msg *mcp.Message) bool {
	return msg.Kind() == mcp.KindResponse && bytes.Contains(msg.Result, []byte(`"partial-content"`))
}
