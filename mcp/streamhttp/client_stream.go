package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// clientDrainTime bounds how long the rest of a stream is read after its
// final response, so that the HTTP connection can be reused; on the
// transport's clock.
const clientDrainTime = 200 * time.Millisecond

// clientReadBuffer is the read buffer of a client's SSE decoder. The HTTP
// client buffers the connection already (net/http: 4 KiB unless
// http.Transport.ReadBufferSize says otherwise); this second buffer only
// needs to take in a few events per read. Each open stream holds one, so
// a load generator with 10,000 streams saves 30 MB against bufio's
// default 4 KiB.
const clientReadBuffer = 1 << 10

// clientStream is one SSE stream as the client follows it across
// reconnections: the answer to a POSTed request, or the standalone GET
// stream. It is used by one goroutine only.
type clientStream struct {
	rpcID      mcp.ID // the request it answers; zero for the standalone stream
	method     string
	standalone bool
	lastID     string // the newest event id received, on any connection
	retry      time.Duration
	hasRetry   bool
	done       bool // the final response arrived
}

// final reports whether msg ends the answer the stream carries: the
// response to its request, except a SEP-1905 streaming response to
// tools/call with isComplete false, after which more responses with the
// same id follow (SEP-1905, "Case 3" and "Streaming Behavior").
func (s *clientStream) final(msg *mcp.Message) bool {
	if s.standalone || msg.Kind() != mcp.KindResponse || msg.ID != s.rpcID {
		return false
	}
	if msg.Error != nil || s.method != mcp.MethodToolsCall {
		return true
	}
	return !mcp.MoreToFollow(msg.Result)
}

// delay is how long to wait before reconnecting: the server's retry field
// when it sent one (2025-11-25 Transports, "Sending Messages to the
// Server": the client MUST respect it), else def.
func (s *clientStream) delay(def time.Duration) time.Duration {
	if s.hasRetry {
		return s.retry
	}
	return def
}

// errClientNoStream marks a resume or standalone GET the server refused
// for good (405, another 4xx, or a non-SSE answer).
var errClientNoStream = errors.New("no stream")

// clientMalformed marks a stream that carried something other than
// JSON-RPC messages; it is not resumed.
type clientMalformed struct{ err error }

func (e *clientMalformed) Error() string { return "malformed SSE stream: " + e.err.Error() }
func (e *clientMalformed) Unwrap() error { return e.err }

// goStream starts f as a stream goroutine unless the Conn is closed.
func (c *clientConn) goStream(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// standaloneWait bounds how long the Write of notifications/initialized
// waits for the server to answer the standalone GET, on the transport's
// clock.
const standaloneWait = 2 * time.Second

// startStandalone opens the standalone GET stream once per session
// (2025-11-25 Transports, "Listening for Messages from the Server"). A 405
// means the server offers none; that is fine. The returned channel is
// closed once the GET was answered (or failed); it is nil when no stream
// is opened.
func (c *clientConn) startStandalone() <-chan struct{} {
	if c.t.NoStandaloneStream {
		return nil
	}
	c.mu.Lock()
	if c.standalone {
		c.mu.Unlock()
		return nil
	}
	c.standalone = true
	c.mu.Unlock()
	opened := make(chan struct{})
	started := c.goStream(func() {
		s := &clientStream{standalone: true}
		resp, cancel, err := c.openGET(s)
		close(opened)
		if err != nil {
			return
		}
		c.followStream(s, resp, cancel)
	})
	if !started {
		return nil
	}
	return opened
}

// awaitStandalone waits, at most standaloneWait, for the standalone GET to
// be answered, so that the stream is open before the client's next
// request. Otherwise the GET races that request: a server drops what it
// has to send outside a request while no GET stream is open (the
// TypeScript SDK server without an event store drops its
// notifications/tasks/status so), and a server may take a late GET for the
// resumption of a stream it has just closed (the conformance suite's
// sse-retry scenario answers the pending tools/call on it).
func (c *clientConn) awaitStandalone(ctx context.Context, opened <-chan struct{}) {
	if opened == nil {
		return
	}
	t := clock.NewTimer(c.t.Clock, standaloneWait)
	defer t.Stop()
	select {
	case <-opened:
	case <-t.C():
	case <-ctx.Done():
	case <-c.ctx.Done():
	}
}

// runStream follows the SSE answer to a POST in its own goroutine.
func (c *clientConn) runStream(s *clientStream, resp *http.Response, cancel context.CancelFunc) {
	if !c.goStream(func() { c.followStream(s, resp, cancel) }) {
		resp.Body.Close()
		cancel()
	}
}

// followStream reads a stream and, when it breaks before its final
// response, resumes it with GET and Last-Event-ID after the retry delay
// (2025-11-25 Transports, "Resumability and Redelivery"), as many times as
// it breaks, always with the newest event id received on any of its
// connections. A server may close connections on purpose and let the
// client "poll" the stream ("Sending Messages to the Server"), so a
// resumed connection that ends, even without an event, is resumed again;
// only MaxReconnects failed attempts in a row (no stream in answer) give
// the stream up. The loss is reported to Read as a *StreamError.
func (c *clientConn) followStream(s *clientStream, resp *http.Response, cancel context.CancelFunc) {
	failures := 0
	var lastErr error
	for {
		if resp != nil {
			err := c.readStream(s, resp.Body, cancel)
			cancel()
			resp = nil
			if s.done || c.ctx.Err() != nil {
				return
			}
			var bad *clientMalformed
			if errors.As(err, &bad) {
				c.streamFailed(s, err)
				return
			}
			lastErr = err
			if s.lastID == "" && !s.standalone {
				c.streamFailed(s, errors.New("the stream ended before the response and carried no event id to resume from"))
				return
			}
		}
		if failures >= c.t.MaxReconnects {
			msg := fmt.Sprintf("gave up after %d attempts to resume after event %q", failures, s.lastID)
			if lastErr != nil {
				msg += ": " + lastErr.Error()
			}
			c.streamFailed(s, errors.New(msg))
			return
		}
		if !c.sleep(s.delay(c.t.ReconnectDelay)) {
			return
		}
		var err error
		resp, cancel, err = c.openGET(s)
		switch {
		case err == nil:
			failures = 0
		case errors.Is(err, ErrSessionGone) || errors.Is(err, errClientNoStream):
			c.streamFailed(s, err)
			return
		default:
			failures++
			lastErr = err
		}
	}
}

// streamFailed reports that the answer on s can no longer arrive. The loss
// of the standalone stream concerns no request and is not reported.
func (c *clientConn) streamFailed(s *clientStream, err error) {
	if s.standalone || c.ctx.Err() != nil {
		return
	}
	c.deliverError(&StreamError{ID: s.rpcID, Method: s.method, LastEventID: s.lastID, Err: err})
}

// sleep waits d on the transport's clock, or until the Conn closes; it
// reports whether d elapsed.
func (c *clientConn) sleep(d time.Duration) bool {
	if d <= 0 {
		return c.ctx.Err() == nil
	}
	t := clock.NewTimer(c.t.Clock, d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-c.ctx.Done():
		return false
	}
}

// openGET opens a GET stream: the standalone one, or the resumption of s
// after its last event id.
func (c *clientConn) openGET(s *clientStream) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(c.ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.t.URL, nil)
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("streamhttp: %w", err)
	}
	c.setHeaders(req, true)
	req.Header.Set("Accept", "text/event-stream")
	resume := s.lastID != ""
	if resume {
		req.Header.Set(clientHeaderLastID, s.lastID)
	}
	sid := req.Header.Get(clientHeaderSession)
	info := RequestInfo{Method: http.MethodGet, RPCID: s.rpcID, RPCMethod: s.method, LastEventID: s.lastID, Resume: resume, Standalone: s.standalone && !resume}
	resp, err := c.do(req, 0, info)
	if err != nil {
		cancel()
		return nil, nil, c.requestError(http.MethodGet, nil, err)
	}
	fail := func(err error) (*http.Response, context.CancelFunc, error) {
		resp.Body.Close()
		cancel()
		return nil, nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && sid != "":
		c.sessionLost(sid)
		return fail(fmt.Errorf("GET %s: %w", c.t.URL, ErrSessionGone))
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return fail(fmt.Errorf("GET %s: %s: %w offered at this endpoint", c.t.URL, resp.Status, errClientNoStream))
	case resp.StatusCode >= 400 && resp.StatusCode <= 499:
		return fail(fmt.Errorf("%w: %w", errClientNoStream, c.statusError(http.MethodGet, resp)))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return fail(c.statusError(http.MethodGet, resp))
	case mediaType(resp.Header.Get("Content-Type")) != "text/event-stream":
		return fail(fmt.Errorf("GET %s: %s: %w: Content-Type %q", c.t.URL, resp.Status, errClientNoStream, resp.Header.Get("Content-Type")))
	}
	return resp, cancel, nil
}

// readStream reads one connection of s until it ends, delivering every
// message and noting the newest event id and retry.
func (c *clientConn) readStream(s *clientStream, body io.ReadCloser, cancel context.CancelFunc) error {
	defer body.Close()
	r := sse.NewReaderSize(body, clientReadBuffer)
	r.MaxLine, r.MaxEvent = c.t.MaxMessage, c.t.MaxMessage
	for {
		ev, err := r.Next()
		// The reader's last event id counts blocks without data too.
		if id := r.LastEventID(); id != "" {
			s.lastID = id
		}
		if d, ok := r.Retry(); ok {
			s.retry, s.hasRetry = d, true
		}
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, sse.ErrLineTooLong) || errors.Is(err, sse.ErrEventTooLong):
			return &clientMalformed{err}
		case err != nil:
			return err
		}
		// A priming event ("Sending Messages to the Server": an event id
		// and an empty data field) only sets the resume point.
		if ev.Data == "" || (ev.Name != "" && ev.Name != "message") {
			continue
		}
		msg, derr := mcp.DecodeMessageOwned([]byte(ev.Data)) // a copy made for it
		if derr != nil {
			data := ev.Data
			if len(data) > 80 {
				data = data[:80] + "…"
			}
			return &clientMalformed{fmt.Errorf("event data %q is not a JSON-RPC message: %v", data, derr)}
		}
		final := s.final(msg)
		if final {
			s.done = true
		}
		if !c.deliver(msg) {
			return ErrClosed
		}
		if final {
			// After the response the server SHOULD end the stream; read
			// what is left briefly so the connection can be reused.
			t := c.t.Clock.AfterFunc(clientDrainTime, cancel)
			_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
			t.Stop()
			return nil
		}
	}
}
