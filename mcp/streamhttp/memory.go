package streamhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// The in-memory transport runs Streamable HTTP with no sockets: an
// http.RoundTripper that hands each request to an http.Handler in a
// goroutine of its own and pipes the response back. Everything the
// protocol does over HTTP works as over a socket: sessions, POST answered
// by JSON or SSE, the standalone GET stream, resuming with Last-Event-ID,
// DELETE. It uses only channels, io.Pipe and sync, never a timer, so it
// runs inside testing/synctest bubbles and under a clock.Sim, where a
// goroutine waiting on a socket would stall time.
//
//	client ─Do─▶ RoundTrip ─go─▶ Handler.ServeHTTP(memWriter, request)
//	               ▲ head               │ WriteHeader/Write: held (≤ 2 KiB)
//	               └──── response ◀─────┤ Flush, more body, or return: head sent
//	  resp.Body ◀────── io.Pipe ◀───────┘ body; the handler returning ends it (EOF)
//	  resp.Body.Close / ctx done ──▶ request ctx cancelled, pending writes fail
//
// Like net/http's server, the response head waits until the handler
// flushes, writes more than a small buffer, or returns; a response the
// handler finished within the buffer gets a Content-Length and a
// Content-Type sniffed from the body when the handler set none. When the
// handler returns, the body ends: that is how a server closes an SSE
// connection without ending its stream (mcp.ConnectionCloser,
// MaxStreamDuration), and the client resumes with GET and Last-Event-ID
// (2025-11-25 Transports, "Resumability and Redelivery").
//
// Unlike a socket, the pipe holds nothing once the head is sent: a Write of
// the handler returns when the client has read it (a slow client slows
// the handler at once, as a socket does once its buffers are full), or
// fails once the client closed the body or its request's context ended.
// Write deadlines are accepted and ignored: there is no network to stall,
// and a wall-clock deadline would break simulated time.
//
// In a synctest bubble, make the handler and the client inside the bubble:
// a channel made outside it cannot be waited on durably, and one made
// inside it cannot be used from outside.

// MemoryHost is the host name of the URL Pipe gives.
const MemoryHost = "memory"

// memoryRemoteAddr is the RemoteAddr of requests the in-memory transport
// serves. They carry no http.LocalAddrContextKey: the Host check of the
// DNS-rebinding defence, which concerns loopback listeners, does not apply.
const memoryRemoteAddr = "memory:1"

// memHoldBytes is how much body a handler may write before the response
// head is sent, as net/http's server holds 2048 bytes before it chooses
// between Content-Length and chunking.
const memHoldBytes = 2048

// NewMemoryTransport returns an http.RoundTripper that serves every request
// with h, in-process, in a new goroutine per request. The request's
// context is cancelled when the client closes the response body, when the
// client's request context ends, or when h returns. h is typically a
// *Handler; any http.Handler works.
func NewMemoryTransport(h http.Handler) http.RoundTripper { return &memoryTransport{h: h} }

// Pipe returns a ClientTransport connected in memory to h: its URL is
// http://memory followed by h's path (Options.Path for a *Handler, else
// DefaultPath), its HTTPClient sends every request through
// NewMemoryTransport(h).
func Pipe(h http.Handler) *ClientTransport {
	path := DefaultPath
	if sh, ok := h.(*Handler); ok {
		path = sh.opts.Path
	}
	return &ClientTransport{
		URL:        "http://" + MemoryHost + path,
		HTTPClient: &http.Client{Transport: NewMemoryTransport(h)},
	}
}

type memoryTransport struct{ h http.Handler }

// errBodyClosed is what reading a response body after Close returns.
var errBodyClosed = errors.New("streamhttp: memory transport: read on closed response body")

// RoundTrip implements http.RoundTripper. It returns once the handler has
// sent the response head, or with the context's error if the request's
// context ends first.
func (t *memoryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	srvCtx, cancelSrv := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	body := &memBody{pr: pr, cancelSrv: cancelSrv}
	body.watch(ctx)
	w := &memWriter{
		method: req.Method,
		header: make(http.Header),
		pw:     pw,
		body:   body,
		ready:  make(chan memHead, 1),
	}
	go w.serve(t.h, serverRequest(req, srvCtx), cancelSrv, req.Body)
	select {
	case head := <-w.ready:
		if err := ctx.Err(); err != nil {
			// The request was cancelled while the head came: the
			// cancellation wins, whichever the select saw first.
			body.abort(err)
			return nil, err
		}
		if head.err != nil {
			body.abort(head.err)
			return nil, head.err
		}
		head.resp.Request = req
		return head.resp, nil
	case <-ctx.Done():
		body.abort(ctx.Err())
		return nil, ctx.Err()
	}
}

// serverRequest is req as a server sees it, with ctx as its context.
func serverRequest(req *http.Request, ctx context.Context) *http.Request {
	r := req.Clone(ctx)
	r.RequestURI = req.URL.RequestURI()
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		r.URL = u
	} else {
		r.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	}
	if r.Host == "" {
		r.Host = req.URL.Host
	}
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, 1
	r.RemoteAddr = memoryRemoteAddr
	r.Close = false
	r.GetBody = nil
	r.TLS = nil
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		r.Body, r.ContentLength = http.NoBody, 0
	case req.ContentLength == 0:
		// A client request's 0 with a body means "unknown"; a server
		// request says -1.
		r.ContentLength = -1
	}
	return r
}

// memHead is what RoundTrip waits for: the response head, or why there
// is none.
type memHead struct {
	resp *http.Response
	err  error
}

// memWriter is the http.ResponseWriter of one in-memory request. Only the
// goroutine serving the request touches it (net/http's rule for a
// ResponseWriter: not after ServeHTTP returns, not concurrently).
type memWriter struct {
	method string
	header http.Header
	pw     *io.PipeWriter
	body   *memBody
	ready  chan memHead // capacity 1; gets one value

	status int         // 0 until WriteHeader
	sent   http.Header // the header as of WriteHeader
	held   []byte      // body written before the head went out
	headUp bool        // the head was sent
	werr   error       // the first failed write to the pipe
}

func (w *memWriter) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter. Informational (1xx) codes
// are not passed on; a second call is ignored, as net/http does.
func (w *memWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
	w.sent = w.header.Clone()
}

// Write implements http.ResponseWriter.
func (w *memWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.werr != nil {
		return 0, w.werr
	}
	if !w.headUp {
		if len(w.held)+len(p) <= memHoldBytes {
			w.held = append(w.held, p...)
			return len(p), nil
		}
		if err := w.stream(); err != nil {
			return 0, err
		}
	}
	if w.method == http.MethodHead {
		return len(p), nil // net/http eats the body of a HEAD answer
	}
	n, err := w.pw.Write(p)
	if err != nil {
		w.werr = err
	}
	return n, err
}

// FlushError sends the head, if not yet sent, and what is held; it is what
// http.ResponseController.Flush calls. Bytes written already went to the
// client (the pipe holds nothing), so it reports only a failed write.
func (w *memWriter) FlushError() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.headUp {
		return w.stream()
	}
	return w.werr
}

// Flush implements http.Flusher.
func (w *memWriter) Flush() { _ = w.FlushError() }

// SetWriteDeadline accepts and ignores a deadline, for
// http.ResponseController: no socket can stall here, and a wall-clock
// deadline would break simulated time. A client that stops reading holds
// the handler until it closes the body or its context ends.
func (w *memWriter) SetWriteDeadline(time.Time) error { return nil }

// SetReadDeadline accepts and ignores a deadline (see SetWriteDeadline).
func (w *memWriter) SetReadDeadline(time.Time) error { return nil }

// EnableFullDuplex implements what http.ResponseController calls: the
// request body stays readable while the response is written, always.
func (w *memWriter) EnableFullDuplex() error { return nil }

// stream sends the head with a body that streams from the pipe, then what
// was held.
func (w *memWriter) stream() error {
	w.headUp = true
	hdr := w.sent
	if len(w.held) > 0 {
		sniff(hdr, w.status, w.held)
	}
	resp := newMemResponse(w.status, hdr)
	resp.ContentLength = -1
	resp.TransferEncoding = []string{"chunked"}
	if w.method == http.MethodHead || !bodyAllowed(w.status) {
		resp.Body = http.NoBody
	} else {
		resp.Body = w.body
	}
	w.ready <- memHead{resp: resp}
	if len(w.held) == 0 || w.method == http.MethodHead {
		w.held = nil
		return nil
	}
	held := w.held
	w.held = nil
	if _, err := w.pw.Write(held); err != nil {
		w.werr = err
		return err
	}
	return nil
}

// complete sends the head of a response the handler finished without
// flushing: its whole body is known, and so is its length.
func (w *memWriter) complete() {
	w.headUp = true
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	hdr := w.sent
	resp := newMemResponse(w.status, hdr)
	if !bodyAllowed(w.status) {
		resp.Body = http.NoBody
		w.body.finish()
		w.ready <- memHead{resp: resp}
		return
	}
	sniff(hdr, w.status, w.held)
	if w.method != http.MethodHead || len(w.held) > 0 {
		hdr.Set("Content-Length", strconv.Itoa(len(w.held)))
	}
	resp.ContentLength = int64(len(w.held))
	if w.method == http.MethodHead || len(w.held) == 0 {
		resp.Body = http.NoBody
		w.body.finish()
	} else {
		w.body.r = bytes.NewReader(w.held)
		resp.Body = w.body
	}
	w.held = nil
	w.ready <- memHead{resp: resp}
}

// serve runs the handler and ends the response when it returns: the head
// goes out if it has not, the body ends, the request's context is
// cancelled (as net/http does once a handler returned) and the client's
// request body is closed (as an http.RoundTripper must). A handler that
// panics aborts the response: the client gets an error instead of a
// response, or instead of the end of the body.
func (w *memWriter) serve(h http.Handler, r *http.Request, cancelSrv context.CancelFunc, reqBody io.Closer) {
	panicked, pv := true, any(nil)
	func() {
		defer func() {
			if panicked {
				pv = recover()
			}
		}()
		h.ServeHTTP(w, r)
		panicked = false
	}()
	cancelSrv()
	if reqBody != nil {
		reqBody.Close()
	}
	if panicked {
		err := fmt.Errorf("streamhttp: memory transport: the handler panicked: %v", pv)
		if pv == http.ErrAbortHandler {
			err = errors.New("streamhttp: memory transport: the handler aborted the response")
		}
		if !w.headUp {
			w.headUp = true
			w.ready <- memHead{err: err}
		}
		w.pw.CloseWithError(err)
		return
	}
	if !w.headUp {
		w.complete()
	}
	w.pw.Close()
}

func newMemResponse(code int, hdr http.Header) *http.Response {
	text := http.StatusText(code)
	if text == "" {
		text = "status code " + strconv.Itoa(code)
	}
	return &http.Response{
		Status:     strconv.Itoa(code) + " " + text,
		StatusCode: code,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
	}
}

// sniff sets a Content-Type guessed from the body when the handler set
// none, as net/http's server does.
func sniff(hdr http.Header, code int, body []byte) {
	if _, ok := hdr["Content-Type"]; ok || len(body) == 0 || !bodyAllowed(code) {
		return
	}
	hdr.Set("Content-Type", http.DetectContentType(body))
}

// bodyAllowed reports whether a response with this status may carry a
// body (RFC 9110: not 1xx, 204 or 304).
func bodyAllowed(code int) bool {
	return code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified
}

// memBody is a response body of the in-memory transport: the read end of
// the pipe the handler writes to, or the whole body when the handler
// finished first. Read is called from one goroutine at a time, Close
// and the request context's end from any.
type memBody struct {
	pr        *io.PipeReader
	r         io.Reader // the whole body; nil: read pr
	cancelSrv context.CancelFunc

	mu    sync.Mutex
	err   error       // why reading stopped, once Close or the context ended it
	stop  func() bool // unregisters the request context's AfterFunc
	ended bool        // finish ran
}

// watch ends the exchange when ctx, the client's request context, ends.
func (b *memBody) watch(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { b.abort(ctx.Err()) })
	b.mu.Lock()
	b.stop = stop
	ended := b.ended
	b.mu.Unlock()
	if ended {
		stop()
	}
}

func (b *memBody) Read(p []byte) (int, error) {
	if err := b.stopped(); err != nil {
		return 0, err
	}
	if b.r != nil {
		return b.r.Read(p)
	}
	n, err := b.pr.Read(p)
	if err != nil && err != io.EOF {
		// A read the abort cut short says why, not io.ErrClosedPipe.
		if why := b.stopped(); why != nil {
			err = why
		}
	}
	return n, err
}

func (b *memBody) stopped() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// Close implements io.Closer: the handler's request context is cancelled
// and its pending and later writes fail, as when a client closes an HTTP
// connection.
func (b *memBody) Close() error {
	b.abort(errBodyClosed)
	return nil
}

// abort stops the body with err and ends the exchange.
func (b *memBody) abort(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.pr.CloseWithError(err)
	b.finish()
}

// finish cancels the handler's request context and forgets the client's.
func (b *memBody) finish() {
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return
	}
	b.ended = true
	stop := b.stop
	b.mu.Unlock()
	b.cancelSrv()
	if stop != nil {
		stop()
	}
}
