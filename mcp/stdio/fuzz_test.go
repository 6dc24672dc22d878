package stdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
)

// FuzzServe feeds arbitrary input to a stdio server backed by the
// reference server: it must never panic or hang, and every line it writes
// must be one JSON object.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text","arguments":{"chunks":2,"intervalMs":0},"task":{"responseModes":["streaming"]}}}` + "\n",
		`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"x","lastSeqNr":"a"}}` + "\r\n",
		"not json\n\n\r\n[1,2]\n{}\n",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n",
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}` + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) { synctest.Test(t, func(t *testing.T) { serveFuzz(t, in) }) })
}

// serveFuzz runs in a synctest bubble: time is virtual, so a tool's delay
// and the deadline below cost no wall time, and whether a call ends
// before the deadline does not depend on the machine's speed.
func serveFuzz(t *testing.T, in []byte) {
	srv := server.New(nil)
	defer srv.Close()
	var out bytes.Buffer
	// A call that legitimately runs long (sleep for an hour) is still
	// being answered at the deadline; that is not a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	w := &lockedBuffer{b: &out}
	err := stdio.Serve(ctx, srv, bytes.NewReader(in), w, &stdio.ServerOptions{MaxLine: 4096})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve: %v", err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(w.bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("output line is not a JSON object: %q", line)
		}
	}
}
