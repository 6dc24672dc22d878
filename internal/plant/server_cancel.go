package plant

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// CancelWithRequest makes h behave as mark3labs/mcp-go#897 does: a task
// created by a tools/call is cancelled as soon as the HTTP request that
// created it has been answered, as if the task ran on the request's
// context (TASK-SURVIVES-REQUEST: "Disconnection SHOULD NOT be
// interpreted as the client cancelling its request"). It works with any
// tool: it reads the task id from the answer and hands h a tasks/cancel
// in the same session.
func CancelWithRequest(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		var body bytes.Buffer
		r.Body = copyBody{r.Body, &body}
		tw := &copyWriter{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		if !strings.Contains(body.String(), `"tools/call"`) {
			return
		}
		m := taskIDRe.FindSubmatch(tw.buf.Bytes())
		if m == nil {
			return
		}
		handCancel(h, r, "gone-with-request", string(m[1]), "")
	})
}

// handCancel hands h a tasks/cancel of taskID with request id id, posted
// as r was, in r's session or, when r had none, in session sid; its
// answer is discarded.
func handCancel(h http.Handler, r *http.Request, id, taskID, sid string) {
	cancel, err := mcp.NewRequest(mcp.StringID(id), mcp.MethodTasksCancel, mcp.CancelTaskParams{TaskID: taskID})
	if err != nil {
		return
	}
	data, err := cancel.MarshalJSON()
	if err != nil {
		return
	}
	req := httptest.NewRequest(http.MethodPost, r.URL.String(), bytes.NewReader(data))
	req.Header = r.Header.Clone()
	if req.Header.Get("Mcp-Session-Id") == "" && sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	h.ServeHTTP(httptest.NewRecorder(), req)
}

var taskIDRe = regexp.MustCompile(`"taskId":"([^"]+)"`)

// copyBody is a request body that keeps a copy of what was read.
type copyBody struct {
	r io.Reader
	w *bytes.Buffer
}

func (t copyBody) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.w.Write(p[:n])
	return n, err
}

func (t copyBody) Close() error { return nil }

// copyWriter is a ResponseWriter that keeps a copy of the body.
type copyWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *copyWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *copyWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
