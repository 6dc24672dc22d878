package recorder_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// TestConnTakesTheConnsRevision records, through recorder.Conn over a
// real 2026-07-28 Streamable HTTP connection to the dual-era reference
// server on 127.0.0.1, a request that claims no revision (it lacks the
// per-request _meta, and the server refuses it with -32602): the
// connection says which revision it speaks (mcp.RevisionOfConn), so the
// request and its answer have the connection's, 2026-07-28, not none.
func TestConnTakesTheConnsRevision(t *testing.T) {
	u, _ := refserver.Start(t, nil)
	w, path := createTrace(t)
	pipe := recorder.NewPipeline(w, nil)
	ctx := context.Background()
	inner, err := (&streamhttp.ClientTransport{URL: u, Revision: mcp.Revision20260728}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := recorder.Conn(inner, pipe, nil)
	if got := mcp.RevisionOfConn(c); got != mcp.Revision20260728 {
		t.Fatalf("RevisionOfConn through the recorder = %q, want %s", got, mcp.Revision20260728)
	}
	req, err := mcp.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, req); err != nil {
		t.Fatal(err)
	}
	answer, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if answer.Error == nil || answer.Error.Code != mcp.CodeInvalidParams {
		t.Fatalf("answer %+v, want -32602 (no _meta)", answer)
	}
	c.Close()
	if err := pipe.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	type row struct{ Dir, ID, Rev string }
	var got []row
	for _, r := range readTrace(t, path) {
		if r.Kind == traces.KindMessage {
			got = append(got, row{r.Dir.String(), r.RPC.ID, r.Revision})
		}
	}
	want := []row{{"c>s", "1", modern}, {"s>c", "1", modern}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
