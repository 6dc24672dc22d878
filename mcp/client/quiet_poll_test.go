package client_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
)

// TestQuietPoll: a streaming call asks tasks/get when its stream has been
// silent for the poll interval (the server's 500 ms), and with QuietPoll
// only once it has been silent that long. On a simulated clock: a
// segment a second gives a poll in every gap by default and none with a
// QuietPoll of 5 s; a stream silent for 12 s at a time is still polled, every 5 s.
func TestQuietPoll(t *testing.T) {
	for _, tc := range []struct {
		name       string
		intervalMs int
		quiet      time.Duration
		wantGets   func(int) bool
		want       string
	}{
		{"default", 1000, 0, func(n int) bool { return n >= 5 }, "at least one per 1 s gap"},
		{"quiet 5s", 1000, 5 * time.Second, func(n int) bool { return n == 0 }, "none"},
		{"quiet 5s, silent 12s", 12000, 5 * time.Second, func(n int) bool { return n >= 10 && n <= 14 }, "10 to 14 (two in each of the 6 silences of 12 s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err, wire := simStreamRun(t, 3, client.CallOptions{
				Name: server.ToolSlowText, Mode: client.ModeStreaming, QuietPoll: tc.quiet,
				Args: map[string]any{"chunks": 6, "chunkSize": 8, "intervalMs": tc.intervalMs},
			})
			if err != nil || !res.Complete || res.Segments != 6 {
				t.Fatalf("err %v, complete %v, %d segments; want a complete result of 6", err, res.Complete, res.Segments)
			}
			gets := 0
			for _, m := range wire {
				if strings.HasPrefix(m, "c>s ") && strings.Contains(m, `"method":"`+mcp.MethodTasksGet+`"`) {
					gets++
				}
			}
			if !tc.wantGets(gets) {
				t.Errorf("%d tasks/get; want %s", gets, tc.want)
			}
		})
	}
}
