package faults

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// closeBuffer is a dst that tells whether Lines closed it.
type closeBuffer struct {
	bytes.Buffer
	closed bool
}

func (b *closeBuffer) Close() error { b.closed = true; return nil }

// stdoutLines are the recorded stream as a stdio server writes it, one
// line with CRLF, followed by a blank line.
func stdoutLines(idx []int, tail string) string {
	var b strings.Builder
	for _, i := range idx {
		b.WriteString(recordedStream[i])
		if i == 2 {
			b.WriteString("\r\n\n") // a CRLF line, then a blank line
			continue
		}
		b.WriteString("\n")
	}
	return b.String() + tail
}

// TestLinesContract runs every fault that acts on the server's lines
// against the recorded stream: each changes exactly what it says, every
// other byte passes unchanged.
func TestLinesContract(t *testing.T) {
	all := []int{0, 1, 2, 3, 4}
	third := recordedStream[2] + "\r\n"
	cases := []struct {
		spec    string
		want    string
		wantErr error
		closed  bool
	}{
		{spec: "", want: stdoutLines(all, "")},
		{spec: "drop-partial", want: stdoutLines([]int{0, 2, 3, 4}, "")},
		{spec: "drop-response:nth=3", want: strings.Replace(stdoutLines(all, ""), third, "", 1)},
		{spec: "duplicate-seqnr:seqnr=2", want: strings.Replace(stdoutLines(all, ""), third, third+third, 1)},
		{spec: "duplicate-seqnr:seq=0", want: stdoutLines([]int{0, 1, 1, 2, 3, 4}, "")},
		{spec: "reorder:nth=1", want: stdoutLines([]int{1, 0, 2, 3, 4}, "")},
		{spec: "reorder:nth=5", want: stdoutLines(all, "")},
		{spec: "disconnect:after=2", want: stdoutLines([]int{0, 1}, ""), wantErr: ErrCut, closed: true},
		{spec: "disconnect:nth=3,at=before", want: stdoutLines([]int{0, 1}, ""), wantErr: ErrCut, closed: true},
		{spec: "disconnect:nth=3,at=mid", want: stdoutLines([]int{0, 1}, third[:len(third)/2]), wantErr: ErrCut, closed: true},
		{spec: "stall:nth=4", want: stdoutLines([]int{0, 1, 2}, ""), wantErr: context.DeadlineExceeded},
		{spec: "delay:d=1s,nth=2", want: stdoutLines(all, "")},
		{spec: "drop-sse-event", want: stdoutLines(all, "")}, // no SSE on stdio
		{spec: "http-status", want: stdoutLines(all, "")},
		{spec: "ttl-expiry", want: stdoutLines(all, "")}, // acts on requests
		{spec: "drop-response:stream=stdin", want: stdoutLines(all, "")},
		{spec: "server-restart", want: stdoutLines(all, "")}, // acts on what the client sends
		// The faults of 2026-07-28 let lines of 2025-11-25 pass.
		{spec: "cut-request", want: stdoutLines(all, "")},
		{spec: "drop-task-notification", want: stdoutLines(all, "")},
		{spec: "duplicate-task-notification", want: stdoutLines(all, "")},
		{spec: "drop-listen-ack", want: stdoutLines(all, "")},
		{spec: "wrong-replica", want: stdoutLines(all, "")},
		{spec: "wrong-mcp-name", want: stdoutLines(all, "")},
	}
	checkEveryFault(t, func(yield func(string) bool) {
		for _, tc := range cases {
			if !yield(tc.spec) {
				return
			}
		}
	})
	for _, tc := range cases {
		t.Run(tc.spec, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				set := setOf(t, tc.spec)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				var dst closeBuffer
				start := time.Now()
				err := Lines(ctx, &dst, strings.NewReader(stdoutLines(all, "")), set, StreamStdout, nil)
				if got := dst.String(); got != tc.want {
					t.Errorf("got  %q\nwant %q", got, tc.want)
				}
				if !errors.Is(err, tc.wantErr) || dst.closed != tc.closed {
					t.Errorf("ended with %v, closed %v; want %v, %v", err, dst.closed, tc.wantErr, tc.closed)
				}
				if strings.HasPrefix(tc.spec, "delay") && time.Since(start) != time.Second {
					t.Errorf("the delay took %v of bubble time, want 1s", time.Since(start))
				}
			})
		})
	}
}

func TestLinesStdin(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_text","task":{"ttl":60000}}}`
	for _, tc := range []struct{ spec, want string }{
		{"ttl-expiry:ttl=5ms", `{"id":2,"jsonrpc":"2.0","method":"tools/call","params":{"name":"slow_text","task":{"ttl":5}}}` + "\n"},
		{"ttl-expiry:stream=stdout", call + "\n"},
		{"reorder", call + "\n"}, // held until the input ends
	} {
		t.Run(tc.spec, func(t *testing.T) {
			b, _ := Builtin().Parse(tc.spec)
			var dst bytes.Buffer
			if err := Lines(context.Background(), &dst, strings.NewReader(call+"\n"), NewSet(1, b), StreamStdin, nil); err != nil {
				t.Fatal(err)
			}
			if dst.String() != tc.want {
				t.Errorf("got  %q\nwant %q", dst.String(), tc.want)
			}
		})
	}
	// A last line without a newline is a message all the same.
	b, _ := Builtin().Parse("drop-response")
	var dst bytes.Buffer
	_ = Lines(context.Background(), &dst, strings.NewReader(`{"jsonrpc":"2.0","id":1,"result":{}}`), NewSet(1, b), StreamStdout, nil)
	if dst.Len() != 0 {
		t.Errorf("an unterminated last response passed: %q", dst.String())
	}
}
