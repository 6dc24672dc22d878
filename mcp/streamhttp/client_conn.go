package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// Header names of Streamable HTTP (2025-11-25 Transports, "Session
// Management", "Protocol Version Header", "Resumability and Redelivery").
const (
	clientHeaderSession  = "Mcp-Session-Id"
	clientHeaderProtocol = "Mcp-Protocol-Version"
	clientHeaderLastID   = "Last-Event-Id"
)

// clientConn is the Conn of a ClientTransport.
type clientConn struct {
	t      ClientTransport // with defaults filled in
	client *http.Client
	ctx    context.Context // ends on Close; every stream hangs on it
	cancel context.CancelFunc
	in     chan clientItem
	wg     sync.WaitGroup

	mu         sync.Mutex
	sessionID  string
	version    string // negotiated, from the initialize result
	initID     mcp.ID // the initialize request in flight
	gone       bool   // the server answered 404 to our session id
	standalone bool   // the standalone GET stream was started for this session
	closed     bool
	// sidValue and verValue are the header values of sessionID and
	// version, made once per session (setHeaders).
	sidValue, verValue []string

	stats    clientCounters
	observer atomic.Pointer[func(RequestInfo)]
	params   paramBook // the stateless era's x-mcp-header arguments (client_params.go)
}

// clientItem is what Read returns next: a message or a *StreamError.
type clientItem struct {
	msg *mcp.Message
	err error
}

type clientCounters struct {
	post, get, del, reconnects atomic.Int64
	sent, received             atomic.Int64
}

func newClientConn(t ClientTransport) *clientConn {
	if t.ReconnectDelay <= 0 {
		t.ReconnectDelay = DefaultReconnectDelay
	}
	if t.MaxReconnects == 0 {
		t.MaxReconnects = DefaultMaxReconnects
	}
	if t.MaxMessage <= 0 {
		t.MaxMessage = DefaultMaxClientMessage
	}
	t.Clock = clock.Or(t.Clock)
	client := t.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &clientConn{t: t, client: client, ctx: ctx, cancel: cancel, in: make(chan clientItem, 64)}
}

// Read implements mcp.Conn.
func (c *clientConn) Read(ctx context.Context) (*mcp.Message, error) {
	select {
	case it := <-c.in:
		return it.msg, it.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, ErrClosed
	}
}

// Stats implements mcp.StatsReporter.
func (c *clientConn) Stats() mcp.WireStats {
	post, get, del := c.stats.post.Load(), c.stats.get.Load(), c.stats.del.Load()
	return mcp.WireStats{
		HTTPRequests:  post + get + del,
		POST:          post,
		GET:           get,
		DELETE:        del,
		Reconnects:    c.stats.reconnects.Load(),
		BytesSent:     c.stats.sent.Load(),
		BytesReceived: c.stats.received.Load(),
	}
}

// ObserveRequests implements RequestObserver.
func (c *clientConn) ObserveRequests(f func(RequestInfo)) {
	if f == nil {
		c.observer.Store(nil)
		return
	}
	c.observer.Store(&f)
}

// Revision implements mcp.RevisionReporter: the transport's Revision, the
// zero value being the session era, 2025-11-25.
func (c *clientConn) Revision() mcp.Revision {
	if c.t.Revision == "" {
		return mcp.Revision20251125
	}
	return c.t.Revision
}

// deliver queues msg for Read, noting the negotiated protocol version when
// msg answers initialize. It reports false when the Conn closed first.
func (c *clientConn) deliver(msg *mcp.Message) bool {
	c.noteInitialize(msg)
	c.params.noteAnswer(msg)
	select {
	case c.in <- clientItem{msg: msg}:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *clientConn) deliverError(err *StreamError) {
	select {
	case c.in <- clientItem{err: err}:
	case <-c.ctx.Done():
	}
}

// noteInitialize takes the protocol version from the initialize result as
// it passes through: later requests carry it in MCP-Protocol-Version
// (2025-11-25 Transports, "Protocol Version Header").
func (c *clientConn) noteInitialize(msg *mcp.Message) {
	if msg.Kind() != mcp.KindResponse || msg.Result == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.initID.IsZero() || msg.ID != c.initID {
		return
	}
	c.initID = mcp.ID{}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(msg.Result, &res) == nil && res.ProtocolVersion != "" {
		c.version = res.ProtocolVersion
	}
}

// Write implements mcp.Conn: one POST per message (2025-11-25 Transports,
// "Sending Messages to the Server"). It returns once the answer's headers
// arrived; a JSON answer is read and queued before it returns, an SSE
// answer is read on by a goroutine of its own, which outlives ctx and ends
// with the stream or the Conn. An HTTP error status becomes a one-line
// error naming the request.
func (c *clientConn) Write(ctx context.Context, msg *mcp.Message) error {
	body, err := msg.MarshalJSON() // sized for the message: one allocation
	if err != nil {
		return fmt.Errorf("streamhttp: encode: %w", err)
	}
	if c.t.Revision.IsStateless() {
		return c.writeStateless(ctx, msg, body)
	}
	isInit := msg.Kind() == mcp.KindRequest && msg.Method == mcp.MethodInitialize
	sid, err := c.beginPost(msg, isInit)
	if err != nil {
		return err
	}
	p, err := c.post(ctx, msg, body, isInit)
	if err != nil {
		return err
	}
	if err := c.checkAnswer(p, sid, isInit); err != nil {
		p.cleanup()
		return err
	}
	if err := c.readAnswer(ctx, msg, p); err != nil {
		return err
	}
	if msg.Kind() == mcp.KindNotification && msg.Method == mcp.NotificationInitialized {
		c.awaitStandalone(ctx, c.startStandalone())
	}
	return nil
}

// beginPost readies the Conn for a POST of msg and returns the session id
// it goes with: an initialize starts a new session ("Session Management":
// an initialize request carries no session id, also after a 404); any
// other message fails once the session is gone.
func (c *clientConn) beginPost(msg *mcp.Message, isInit bool) (sid string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", ErrClosed
	}
	if isInit {
		c.sessionID, c.version, c.gone, c.standalone = "", "", false, false
		c.initID = msg.ID
	} else if c.gone {
		return "", fmt.Errorf("POST %s: %w", c.t.URL, ErrSessionGone)
	}
	return c.sessionID, nil
}

// postAnswer is the answer to one POST, its headers read: the request
// ends with cancelReq; stop unhooks it from the writer's ctx.
type postAnswer struct {
	resp      *http.Response
	stop      func() bool
	cancelReq context.CancelFunc
}

func (p *postAnswer) cleanup() {
	p.stop()
	p.resp.Body.Close()
	p.cancelReq()
}

// post sends msg, encoded in body, and returns once the answer's headers
// arrived. The request lives on the Conn's context, cancelled also when
// ctx ends before the headers.
func (c *clientConn) post(ctx context.Context, msg *mcp.Message, body []byte, isInit bool) (*postAnswer, error) {
	reqCtx, cancelReq := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancelReq)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.t.URL, bytes.NewReader(body))
	if err != nil {
		stop()
		cancelReq()
		return nil, fmt.Errorf("streamhttp: %w", err)
	}
	c.setHeaders(req, !isInit)
	req.Header["Accept"] = postAccept
	req.Header["Content-Type"] = jsonContentType
	info := RequestInfo{Method: http.MethodPost, RPCID: msg.ID, RPCMethod: msg.Method}
	resp, err := c.do(req, int64(len(body)), info)
	if err != nil {
		stop()
		cancelReq()
		return nil, c.requestError(http.MethodPost, ctx, err)
	}
	return &postAnswer{resp: resp, stop: stop, cancelReq: cancelReq}, nil
}

// checkAnswer turns an answer's error status into an error (404 of the
// session sid: the session is gone), and takes the session id an
// initialize's answer gives.
func (c *clientConn) checkAnswer(p *postAnswer, sid string, isInit bool) error {
	resp := p.resp
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		c.sessionLost(sid)
		return fmt.Errorf("POST %s: %w", c.t.URL, ErrSessionGone)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(http.MethodPost, resp)
	}
	if !isInit {
		return nil
	}
	if id := resp.Header.Get(clientHeaderSession); id != "" {
		if !visibleASCII(id) {
			return fmt.Errorf("POST %s: %s: invalid %s header %q (visible ASCII only)", c.t.URL, resp.Status, clientHeaderSession, id)
		}
		c.mu.Lock()
		c.sessionID = id
		c.mu.Unlock()
	}
	return nil
}

// readAnswer reads the body of a successful answer to msg by its
// Content-Type: a JSON answer at once, an SSE answer by a goroutine of its
// own that outlives ctx.
func (c *clientConn) readAnswer(ctx context.Context, msg *mcp.Message, p *postAnswer) error {
	resp := p.resp
	ct := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode != http.StatusAccepted && resp.ContentLength == 0 && ct != "text/event-stream" && msg.Kind() == mcp.KindRequest:
		// A request answered 200 with nothing: its answer is lost, and
		// waiting for it would wait forever ("Sending Messages to the
		// Server": a request is answered by a JSON object or an SSE
		// stream).
		p.cleanup()
		return fmt.Errorf("POST %s: %s with an empty body: the answer to request %s is lost", c.t.URL, resp.Status, msg.ID)
	case resp.StatusCode == http.StatusAccepted || resp.ContentLength == 0 && ct != "text/event-stream":
		p.cleanup()
	case ct == "application/json":
		err := c.readJSON(ctx, resp, msg.Kind() == mcp.KindRequest)
		p.cleanup()
		return err
	case ct == "text/event-stream":
		if !p.stop() {
			// ctx ended while the headers came: the request was cancelled.
			resp.Body.Close()
			p.cancelReq()
			return c.requestError(http.MethodPost, ctx, ctx.Err())
		}
		c.runStream(&clientStream{rpcID: msg.ID, method: msg.Method}, resp, p.cancelReq)
	default:
		p.cleanup()
		if msg.Kind() == mcp.KindRequest {
			return fmt.Errorf("POST %s: %s: unexpected Content-Type %q (is this an MCP endpoint?)", c.t.URL, resp.Status, resp.Header.Get("Content-Type"))
		}
		// A body nobody asked for; the message was accepted.
	}
	return nil
}

// readJSON reads a JSON answer: one JSON-RPC message. An empty body is
// accepted only when no answer is due (the POST carried no request).
func (c *clientConn) readJSON(ctx context.Context, resp *http.Response, request bool) error {
	data, err := readBody(resp, c.t.MaxMessage)
	if err != nil {
		return c.requestError(http.MethodPost, ctx, fmt.Errorf("read body: %w", err))
	}
	if len(data) > c.t.MaxMessage {
		return fmt.Errorf("POST %s: %s: body longer than %d bytes", c.t.URL, resp.Status, c.t.MaxMessage)
	}
	if !request {
		// No answer is due to a notification or a response: the server
		// MUST answer 202 with no body ("Sending Messages to the
		// Server"). One that answers 200 with a body all the same (the
		// conformance suite's initialize scenario sends
		// {"jsonrpc":"2.0","result":{}}) accepted the message; the body
		// concerns no request and is ignored.
		return nil
	}
	msg, err := mcp.DecodeMessage(data)
	if err != nil {
		return fmt.Errorf("POST %s: %s: body is not a JSON-RPC message: %v", c.t.URL, resp.Status, err)
	}
	if !c.deliver(msg) {
		return ErrClosed
	}
	return nil
}

// readBody reads a response body of at most max bytes (one more when it
// is longer), into a buffer of the announced Content-Length when there is
// one, so that it is read without growing.
func readBody(resp *http.Response, max int) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= int64(max) {
		buf := make([]byte, n+1) // +1: a body longer than announced shows
		k, err := io.ReadFull(resp.Body, buf)
		if int64(k) == n && err == io.ErrUnexpectedEOF {
			err = nil // the whole body, then its end
		}
		return buf[:k], err
	}
	return io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
}

// setHeaders adds the user's headers, the session id and the negotiated
// protocol version ("Session Management": on all subsequent requests;
// "Protocol Version Header": likewise).
func (c *clientConn) setHeaders(req *http.Request, session bool) {
	for k, vs := range c.t.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if !session {
		return
	}
	c.mu.Lock()
	sid, ver := c.sessionID, c.version
	if sid != "" && (len(c.sidValue) == 0 || c.sidValue[0] != sid) {
		c.sidValue = []string{sid}
	}
	if ver != "" && (len(c.verValue) == 0 || c.verValue[0] != ver) {
		c.verValue = []string{ver}
	}
	sidValue, verValue := c.sidValue, c.verValue
	c.mu.Unlock()
	// The keys are canonical, and the value slices are shared by every
	// request of the session (net/http does not modify a request's
	// headers): no allocation per request.
	if sid != "" {
		req.Header[clientHeaderSession] = sidValue
	}
	if ver != "" {
		req.Header[clientHeaderProtocol] = verValue
	}
}

// Header values every POST carries, shared by all requests.
var (
	postAccept      = []string{"application/json, text/event-stream"}
	jsonContentType = []string{"application/json"}
)

// do sends req, counting it and its size, and tells the observer.
func (c *clientConn) do(req *http.Request, bodyLen int64, info RequestInfo) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost:
		c.stats.post.Add(1)
	case http.MethodGet:
		c.stats.get.Add(1)
		if info.Resume {
			c.stats.reconnects.Add(1)
		}
	case http.MethodDelete:
		c.stats.del.Add(1)
	}
	size := requestSize(req, bodyLen)
	c.stats.sent.Add(size)
	info.At = c.t.Clock.Now()
	info.BytesSent = size
	resp, err := c.client.Do(req)
	if resp != nil {
		info.Status = resp.StatusCode
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.stats.received}
	}
	info.Err = err
	if f := c.observer.Load(); f != nil {
		(*f)(info)
	}
	return resp, err
}

// requestSize approximates a request's size on the wire: request line,
// the headers set, Host, the blank line and the body.
func requestSize(req *http.Request, bodyLen int64) int64 {
	n := int64(len(req.Method) + 1 + len(req.URL.RequestURI()) + len(" HTTP/1.1\r\n"))
	n += int64(len("Host: \r\n") + len(req.URL.Host))
	for k, vs := range req.Header {
		for _, v := range vs {
			n += int64(len(k) + 2 + len(v) + 2)
		}
	}
	if bodyLen > 0 {
		n += int64(len("Content-Length: \r\n")) + digits(bodyLen)
	}
	return n + 2 + bodyLen
}

// digits is the length of n > 0 in decimal.
func digits(n int64) int64 {
	d := int64(1)
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// countingBody counts the bytes read from a response body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// sessionLost records a 404 to session id sid.
func (c *clientConn) sessionLost(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID == sid {
		c.gone = true
	}
}

// requestError turns a failed request into one line: "POST URL: cause".
// A cancelled or expired ctx is reported as such.
func (c *clientConn) requestError(method string, ctx context.Context, err error) error {
	if ctx != nil && ctx.Err() != nil {
		err = ctx.Err()
	} else if c.ctx.Err() != nil {
		return ErrClosed
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%s %s: %w", method, c.t.URL, err)
}

// statusError turns an HTTP error status into one line: "POST URL: 400 Bad
// Request: message", with the message of a JSON-RPC error body, or the
// first line of a plain-text body, when there is one; for a redirect, its
// Location.
func (c *clientConn) statusError(method string, resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	detail := ""
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		if m, err := mcp.DecodeMessage(data); err == nil && m.Error != nil {
			detail = m.Error.Message
		}
	case "text/plain":
		detail, _, _ = strings.Cut(strings.TrimSpace(string(data)), "\n")
		if len(detail) > 200 {
			detail = detail[:200] + "…"
		}
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode <= 399 && loc != "" {
		// Only a client whose HTTPClient follows no redirect sees one.
		detail = fmt.Sprintf("a redirect to %.200q, not followed", loc)
	}
	if detail != "" {
		return fmt.Errorf("%s %s: %s: %s", method, c.t.URL, resp.Status, detail)
	}
	return fmt.Errorf("%s %s: %s", method, c.t.URL, resp.Status)
}

// Close implements mcp.Conn: it ends every stream, terminates the session
// with DELETE ("Session Management": clients SHOULD; a 405 answer means the
// server does not allow it, which is fine) and waits for the stream
// goroutines. A pending Read returns ErrClosed.
func (c *clientConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sid, gone := c.sessionID, c.gone
	c.mu.Unlock()
	c.cancel()
	var err error
	if sid != "" && !gone {
		err = c.deleteSession()
	}
	c.wg.Wait()
	return err
}

func (c *clientConn) deleteSession() error {
	ctx, cancel := withTimeout(context.Background(), c.t.Clock, clientCloseTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.t.URL, nil)
	if err != nil {
		return fmt.Errorf("streamhttp: %w", err)
	}
	c.setHeaders(req, true)
	resp, err := c.do(req, 0, RequestInfo{Method: http.MethodDelete})
	if err != nil {
		return c.requestError(http.MethodDelete, ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299,
		resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed:
		return nil
	}
	return c.statusError(http.MethodDelete, resp)
}

// withTimeout is context.WithTimeout on c: on a simulated clock the
// context ends when simulated time passes d.
func withTimeout(parent context.Context, c clock.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := c.(clock.System); ok {
		return context.WithTimeout(parent, d)
	}
	ctx, cancel := context.WithCancel(parent)
	t := c.AfterFunc(d, cancel)
	return ctx, func() {
		t.Stop()
		cancel()
	}
}

// mediaType returns the lower-case media type of a Content-Type value.
func mediaType(v string) string {
	switch v { // the usual answers, without parsing (and its allocations)
	case "application/json", "text/event-stream":
		return v
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		mt, _, _ = strings.Cut(v, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt
}

// visibleASCII reports whether s holds only 0x21-0x7E ("Session
// Management": the session id MUST only contain visible ASCII).
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return true
}
