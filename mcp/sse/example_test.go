package sse_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/tasksim/tasksim/mcp/sse"
)

func Example() {
	// A server's side: an event that only sets the resume point, a message,
	// and a keep-alive.
	var stream strings.Builder
	w := sse.NewWriter(&stream)
	w.WriteEvent(sse.Event{ID: "s1-0", HasID: true})
	w.WriteEvent(sse.Event{ID: "s1-1", Data: `{"jsonrpc":"2.0","id":1,"result":{}}`})
	w.WriteComment("keep-alive")
	fmt.Printf("%q\n", stream.String())

	// A client's side, on a stream cut inside an event.
	r := sse.NewReader(strings.NewReader(stream.String() + "id: s1-2\ndata: {"))
	for ev, err := range r.Events() {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("id %q data %q\n", ev.ID, ev.Data)
	}
	fmt.Println("cut:", r.Partial(), "resume after:", r.LastEventID())
	// Output:
	// "id: s1-0\ndata:\n\nid: s1-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n: keep-alive\n\n"
	// id "s1-0" data ""
	// id "s1-1" data "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"
	// cut: true resume after: s1-1
}

func ExampleAppendEvent() {
	// Keep encoded events for replay after a reconnect.
	var replay [][]byte
	for i, data := range []string{"first", "second\nline"} {
		b, err := sse.AppendEvent(nil, sse.Event{ID: fmt.Sprint(i), Name: "message", Data: data})
		if err != nil {
			panic(err)
		}
		replay = append(replay, b)
	}
	for _, b := range replay {
		os.Stdout.Write(b)
	}
	// Output:
	// id: 0
	// event: message
	// data: first
	//
	// id: 1
	// event: message
	// data: second
	// data: line
}
