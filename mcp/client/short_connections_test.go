package client_test

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// A server may close an SSE connection without terminating the stream;
// the client resumes it with GET and Last-Event-ID (2025-11-25
// Transports, "Sending Messages to the Server", "Resumability and
// Redelivery"). These tests script every connection, so what each one
// carries is fixed, not a matter of how fast a server's timer fires: the
// reference server behind short connections is exercised by every real
// test over the http-short-connections dialer.
//
// The client's clock is simulated and never moves, so it never polls; the
// server's retry field is 0, so resumes go out at once.

// shortConnections returns a script whose tools/call answer is one
// connection of a stream and whose resumes are the next ones.
func shortConnections(t *testing.T) *script {
	s := newScript(t)
	s.transport = streamhttp.ClientTransport{NoStandaloneStream: true}
	return s
}

func stillClock() client.Options {
	return client.Options{NoPartial: true, Clock: clock.NewSim(simStart)}
}

// A stream cut after every two events is resumed each time with the newest
// event id, and loses nothing (CLIENT-RESUME).
func TestHTTPStreamingAcrossShortConnections(t *testing.T) {
	s := shortConnections(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.prime("e0", 0)
		w.send("e1", partial(id, task(mcp.StatusWorking), false, seg(1)))
		w.send("e2", partial(id, nil, false, seg(2)))
	}
	s.resume = func(w *sseWriter, last string) {
		id := s.callID()
		switch last {
		case "e2":
			w.send("e3", partial(id, nil, false, seg(3)))
			w.send("e4", partial(id, nil, false, seg(4)))
		case "e4":
			w.send("e5", partial(id, nil, false, seg(5)))
			w.send("e6", partial(id, nil, false, seg(6)))
		case "e6":
			w.send("e7", partial(id, task(mcp.StatusCompleted), true, seg(7)))
		default:
			t.Errorf("resume after %q", last)
		}
	}
	opts := stillClock()
	sess := s.start(&opts)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "stream", Mode: client.ModeStreaming})
	if err != nil {
		t.Fatal(err)
	}
	wantContent(t, res.Content, blocks(1, 7))
	if res.Counts.Reconnects != 3 || res.Counts.GET != 3 || res.Counts.POST != 1 {
		t.Errorf("counts %+v: want one POST and 3 resuming GETs", res.Counts)
	}
	if res.Duplicates != 0 || res.Gaps != 0 || res.Resumes != 0 || res.StreamLost {
		t.Errorf("duplicates %d gaps %d resumes %d lost %v", res.Duplicates, res.Gaps, res.Resumes, res.StreamLost)
	}
	var ids []string
	for _, e := range res.Timeline {
		if e.Kind == client.EventHTTPRequest && e.Method == "GET" {
			if e.HTTPStatus != 200 {
				t.Errorf("resume GET %+v", e)
			}
			ids = append(ids, e.LastEventID)
		}
	}
	if want := []string{"e2", "e4", "e6"}; !slices.Equal(ids, want) || !slices.Equal(s.lastEventIDs(), want) {
		t.Errorf("Last-Event-ID on the timeline %q, at the server %q; want %q", ids, s.lastEventIDs(), want)
	}
}

// A stream that stays silent across many connections is resumed each
// time, although no connection brings an event: only failed attempts
// count against MaxReconnects.
func TestHTTPSilentStreamAcrossShortConnections(t *testing.T) {
	const silent = streamhttp.DefaultMaxReconnects + 3
	s := shortConnections(t)
	s.call = func(w *sseWriter, id mcp.ID, _ mcp.CallToolParams) {
		w.prime("p0", 0)
	}
	var resumes atomic.Int32
	s.resume = func(w *sseWriter, last string) {
		if last != "p0" {
			t.Errorf("resume after %q", last)
		}
		if resumes.Add(1) <= silent {
			return // the connection ends with nothing on it
		}
		final := result(s.callID(), mcp.PartialResult{Task: task(mcp.StatusCompleted), PartialContent: []mcp.Segment{},
			Content: []mcp.ContentBlock{mcp.TextBlock("woke")}, IsComplete: true, Meta: mcp.Meta{}.WithRelatedTask(scriptTask)})
		w.send("p1", final)
	}
	opts := stillClock()
	sess := s.start(&opts)
	res, err := sess.CallTool(testContext(t), client.CallOptions{Name: "sleep", Mode: client.ModeStreaming})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != client.AnswerStreaming || !res.Complete || res.StreamLost {
		t.Fatalf("answer %q complete %v lost %v", res.Answer, res.Complete, res.StreamLost)
	}
	if texts(res.Content) != "woke" {
		t.Errorf("content %q", texts(res.Content))
	}
	if res.Counts.Reconnects != silent+1 || len(s.lastEventIDs()) != silent+1 {
		t.Errorf("%d reconnects, %d at the server: want %d, more than MaxReconnects (%d)",
			res.Counts.Reconnects, len(s.lastEventIDs()), silent+1, streamhttp.DefaultMaxReconnects)
	}
}
