package check

import "github.com/tasksim/tasksim/traces"

// LabelOrder is the trace header label a recorder sets, to "send", when it
// records every message of the server in the order the server sent it
// (Options.SendOrder): a recorder inside the server, at the point where a
// message is handed to a stream. tasksim's proxies never set it.
const LabelOrder = "order"

// SendOrderOf reports whether header h says its records are in the
// server's send order.
func SendOrderOf(h traces.Header) bool {
	for _, l := range h.Labels {
		if l.Key == LabelOrder && l.Value == "send" {
			return true
		}
	}
	return false
}
