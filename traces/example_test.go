package traces_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/traces"
)

func Example() {
	var file bytes.Buffer
	start := time.Date(2026, 5, 3, 10, 30, 0, 0, time.UTC)
	w, err := traces.NewWriter(&file, traces.Header{
		TasksimVersion: "v0.1.0",
		Command:        []string{"tasksim", "record", "-o", "run.trace", "--", "tasksim", "serve", "--stdio"},
		Protocol:       "2025-11-25",
	}, &traces.WriterOptions{Now: func() time.Time { return start }})
	if err != nil {
		panic(err)
	}
	w.Write(traces.Record{Offset: time.Millisecond, Stream: "stdin", Dir: traces.DirClientToServer, Kind: traces.KindStdioLine,
		Raw: []byte(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t-1"}}`)})
	w.Write(traces.Record{Offset: 3 * time.Millisecond, Stream: "stdout", Dir: traces.DirServerToClient, Kind: traces.KindStdioLine,
		Raw: []byte(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"t-1","status":"working"}}`)})
	w.Close()

	r, err := traces.NewReader(&file)
	if err != nil {
		panic(err)
	}
	fmt.Println("protocol", r.Header().Protocol)
	for rec, err := range r.Records() {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d +%v %s %s %s id=%s task=%s status=%q\n",
			rec.Index, rec.Offset, rec.Stream, rec.Dir, rec.RPC.Type, rec.RPC.ID, rec.RPC.TaskID, rec.RPC.Status)
	}
	// Output:
	// protocol 2025-11-25
	// 0 +1ms stdin c>s request id=2 task=t-1 status=""
	// 1 +3ms stdout s>c response id=2 task=t-1 status="working"
}

func ExampleTimelineRow() {
	raw := []byte(`{"jsonrpc":"2.0","id":2,"result":{"taskId":"t-1","status":"working"}}`)
	rec := traces.Record{Offset: 1250 * time.Millisecond, Conn: 1, Stream: "stdout", Dir: traces.DirServerToClient,
		Kind: traces.KindStdioLine, Raw: raw, RPC: traces.DescribeMessage(raw)}
	fmt.Println(strings.Join(traces.TimelineColumns(), " | "))
	fmt.Println(strings.Join(traces.TimelineRow(rec), " | "))
	// Output:
	// TIME | CONN | STREAM | DIR | KIND | METHOD | ID | TASK | SEQ | STATUS | DETAIL
	// +1.250s | 1 | stdout | s>c | stdio-line | (response) | 2 | t-1 | - | working | -
}
