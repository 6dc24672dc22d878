package recorder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// seqHeader numbers the client's HTTP requests, so that the bytes seen at
// the client, at the server and in the trace can be matched per request.
const seqHeader = "X-Rig-Seq"

// rig is reference client -> recording proxy -> reference server, with
// the response bytes teed at both ends.
type rig struct {
	t        *testing.T
	URL      string // the proxy's MCP endpoint
	Trace    string // the trace file
	client   *wireLog
	server   *wireLog
	upstream *httptest.Server
	seq      atomic.Int64 // numbers requests across all the rig's clients
	stop     func()       // stops the proxy and closes the trace
	stopOnce sync.Once
	// seen is gated_text's gate: the tool ends once the client has its
	// chunk (see gatedText).
	seen chan struct{}
}

// gatedText is a tool of the rig's server that emits one chunk and ends
// only once the client saw it (a token on seen, from the call's
// OnSegment): a streaming call of it is answered on an event stream
// whatever the machine's load, since the call cannot end before its
// first answer reached the client.
func gatedText(seen chan struct{}) *server.Tool {
	return &server.Tool{
		Tool: mcp.Tool{
			Name: "gated_text", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional, StreamPartial: true},
		},
		Incremental: true,
		Prepare: func(json.RawMessage) (server.RunFunc, error) {
			return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
				if err := c.Emit(ctx, mcp.TextBlock(server.ChunkText(1, 16))); err != nil {
					return nil, err
				}
				select {
				case <-seen:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.CallToolResult{}, nil
			}, nil
		},
	}
}

func newRig(t *testing.T, hopts *streamhttp.Options) *rig {
	t.Helper()
	seen := make(chan struct{}, 1)
	srv := server.New(&server.Options{Tools: append(server.BuiltinTools(), gatedText(seen))})
	if hopts == nil {
		hopts = &streamhttp.Options{}
	}
	hopts.Logger = slog.New(slog.DiscardHandler)
	h := streamhttp.NewHandler(srv, hopts)
	rg := &rig{t: t, client: newWireLog(), server: newWireLog(), Trace: filepath.Join(t.TempDir(), "run.trace"), seen: seen}
	upstream := httptest.NewServer(serverTee(h, rg.server))
	rg.upstream = upstream

	w, err := traces.Create(rg.Trace, traces.Header{Command: []string{"test"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL + "/mcp")
	p, err := recorder.NewProxy(u, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	rg.URL = "http://" + ln.Addr().String() + "/mcp"
	rg.stop = func() {
		rg.stopOnce.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Errorf("close trace: %v", err)
			}
			h.Close()
			upstream.Close()
			srv.Close()
		})
	}
	t.Cleanup(rg.stop)
	return rg
}

// stopUpstream takes the server away; the proxy stays.
func (rg *rig) stopUpstream() { rg.upstream.Close() }

// transport returns a client transport through the proxy whose HTTP
// traffic is teed into the rig's client log.
func (rg *rig) transport(cut func(body []byte) int) *streamhttp.ClientTransport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	ct := &clientTee{rt: tr, log: rg.client, seq: &rg.seq, cut: cut}
	return &streamhttp.ClientTransport{URL: rg.URL, HTTPClient: &http.Client{Transport: ct}, ReconnectDelay: 10 * time.Millisecond}
}

func (rg *rig) connect(ctx context.Context, cut func(body []byte) int) *client.Session {
	rg.t.Helper()
	sess, err := client.New(nil).Connect(ctx, rg.transport(cut))
	if err != nil {
		rg.t.Fatalf("connect through the proxy: %v", err)
	}
	return sess
}

// records stops the proxy and reads the whole trace.
func (rg *rig) records() []traces.Record {
	rg.t.Helper()
	rg.stop()
	return readTrace(rg.t, rg.Trace)
}

func readTrace(t *testing.T, path string) []traces.Record {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []traces.Record
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatalf("read trace: %v", err)
		}
		out = append(out, rec)
	}
	return out
}

// wireLog keeps response bodies by request number.
type wireLog struct {
	mu     sync.Mutex
	bodies map[string]*wireBody
}

type wireBody struct {
	method    string
	buf       bytes.Buffer
	responded bool // a response head came (client side)
	eof       bool // read to its end (client side)
}

func newWireLog() *wireLog { return &wireLog{bodies: map[string]*wireBody{}} }

func (l *wireLog) body(seq, method string) *wireBody {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bodies[seq]
	if b == nil {
		b = &wireBody{method: method}
		l.bodies[seq] = b
	}
	return b
}

func (l *wireLog) append(b *wireBody, p []byte) {
	l.mu.Lock()
	b.buf.Write(p)
	l.mu.Unlock()
}

// snapshot returns copies of the bodies.
func (l *wireLog) snapshot() map[string]wireBody {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]wireBody{}
	for k, b := range l.bodies {
		var c wireBody
		c.method, c.eof, c.responded = b.method, b.eof, b.responded
		c.buf.Write(b.buf.Bytes())
		out[k] = c
	}
	return out
}

// serverTee records what the server handler writes, per request number.
func serverTee(h http.Handler, l *wireLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := l.body(r.Header.Get(seqHeader), r.Method)
		h.ServeHTTP(&teeResponseWriter{ResponseWriter: w, b: b, l: l}, r)
	})
}

type teeResponseWriter struct {
	http.ResponseWriter
	b *wireBody
	l *wireLog
}

func (t *teeResponseWriter) Write(p []byte) (int, error) {
	n, err := t.ResponseWriter.Write(p)
	t.l.append(t.b, p[:n])
	return n, err
}

func (t *teeResponseWriter) FlushError() error {
	return http.NewResponseController(t.ResponseWriter).Flush()
}

func (t *teeResponseWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// clientTee numbers requests and records the response bytes the client
// reads. cut, given a POST body, says after how many SSE events to cut
// its response stream (0: never); it is asked once per POST.
type clientTee struct {
	rt  http.RoundTripper
	log *wireLog
	seq *atomic.Int64
	cut func(body []byte) int
}

var errCut = errors.New("rig: stream cut by the client")

func (c *clientTee) RoundTrip(req *http.Request) (*http.Response, error) {
	seq := strconv.FormatInt(c.seq.Add(1), 10)
	req = req.Clone(req.Context())
	req.Header.Set(seqHeader, seq)
	cutAfter := 0
	if req.Body != nil && c.cut != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		cutAfter = c.cut(body)
	}
	b := c.log.body(seq, req.Method) // counted even if it fails
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	c.log.mu.Lock()
	b.responded = true
	c.log.mu.Unlock()
	resp.Body = &teeBody{rc: resp.Body, b: b, l: c.log, cutAfter: cutAfter}
	return resp, nil
}

type teeBody struct {
	rc       io.ReadCloser
	b        *wireBody
	l        *wireLog
	cutAfter int
	cut      bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	if t.cut {
		t.rc.Close()
		return 0, errCut
	}
	n, err := t.rc.Read(p)
	t.l.append(t.b, p[:n])
	if err == io.EOF {
		t.l.mu.Lock()
		t.b.eof = true
		t.l.mu.Unlock()
	}
	if t.cutAfter > 0 {
		t.l.mu.Lock()
		events := strings.Count(t.b.buf.String(), "\n\n")
		t.l.mu.Unlock()
		if events >= t.cutAfter && err == nil {
			t.cut = true
		}
	}
	return n, err
}

func (t *teeBody) Close() error { return t.rc.Close() }
