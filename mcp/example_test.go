package mcp_test

import (
	"fmt"

	"github.com/tasksim/tasksim/mcp"
)

func ExampleDecideMode() {
	server := []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeStreaming, mcp.ModeTask}

	// The client accepts every mode; the result is not ready yet but will
	// come in pieces, so the server streams it.
	client := []mcp.ResponseMode{mcp.ModeImmediate, mcp.ModeTask, mcp.ModeStreaming}
	d := mcp.DecideMode(client, server, false, true)
	fmt.Println(d.Negotiated, d.Mode, d.Fallback)

	// The client only takes streaming from a server that cannot stream:
	// task, with the fallback warning.
	d = mcp.DecideMode([]mcp.ResponseMode{mcp.ModeStreaming}, []mcp.ResponseMode{mcp.ModeTask}, false, true)
	fmt.Println(d.Negotiated, d.Mode, d.Fallback)
	// Output:
	// immediate streaming false
	// task task true
}

func ExampleDecodeMessage() {
	msg, err := mcp.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"t1"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	var p mcp.GetTaskParams
	if err := mcp.DecodeParams(msg.Params, &p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msg.Kind(), msg.ID, msg.Method, p.TaskID)

	// An invalid message still yields its id, for the error response.
	msg, err = mcp.DecodeMessage([]byte(`{"jsonrpc":"1.0","id":8,"method":"ping"}`))
	out, _ := mcp.NewError(msg.ID, err.(*mcp.Error)).MarshalJSON()
	fmt.Println(string(out))
	// Output:
	// request 7 tasks/get t1
	// {"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}
}
