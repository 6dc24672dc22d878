package recorder_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// Record an SSE stream through the proxy and read the trace back.
func ExampleNewProxy() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\nretry: 500\ndata: hello\n\n")
		http.NewResponseController(w).Flush()
		io.WriteString(w, "id: 2\nevent: note\ndata: world\n\n")
	}))
	defer upstream.Close()

	var file bytes.Buffer
	w, err := traces.NewWriter(&file, traces.Header{Command: []string{"example"}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL)
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		log.Fatal(err)
	}
	front := httptest.NewServer(p) // or p.Serve(ctx, listener)
	resp, err := http.Get(front.URL + "/events")
	if err != nil {
		log.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	front.Close()
	p.Close() // everything that passed is recorded
	w.Close()

	r, err := traces.NewReader(&file)
	if err != nil {
		log.Fatal(err)
	}
	for rec, err := range r.Records() {
		if err != nil {
			log.Fatal(err)
		}
		switch rec.Kind {
		case traces.KindConnOpen, traces.KindConnClose:
			fmt.Println("conn", rec.Conn, rec.Kind) // Note: the client's address, or why it closed
		case traces.KindRequestHead:
			fmt.Println(rec.Stream, rec.Kind, rec.HTTP.Method, rec.HTTP.URL)
		case traces.KindResponseHead:
			fmt.Println(rec.Stream, rec.Kind, rec.HTTP.Status)
		case traces.KindSSEEvent:
			fmt.Printf("%s %s id=%s event=%q retry=%v data=%s raw=%q\n", rec.Stream, rec.Kind, rec.SSE.ID, rec.SSE.Event, rec.SSE.Retry, rec.SSE.Data, rec.Raw)
		default:
			fmt.Println(rec.Stream, rec.Kind, rec.Note)
		}
	}
	// Output:
	// conn 1 conn-open
	// req:1 request-head GET /events
	// get:1 response-head 200
	// get:1 sse-event id=1 event="" retry=500ms data=hello raw="id: 1\nretry: 500\ndata: hello\n\n"
	// get:1 sse-event id=2 event="note" retry=0s data=world raw="id: 2\nevent: note\ndata: world\n\n"
	// get:1 body-end eof
	// conn 1 conn-close
}
