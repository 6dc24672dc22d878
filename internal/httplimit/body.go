package httplimit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// timeoutBody is the body of a 408: a JSON-RPC error, as the reference
// server's transport answers a slow body (docs/server.md, "Limits").
const timeoutBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Request Timeout: the body did not arrive in time"}}`

// CutSlowBody returns next with a deadline of d on reading each request's
// body, for a handler that streams the body on rather than reading it
// whole (a proxy). The deadline is the connection's read deadline, set
// when the request reaches next and lifted once the body is read to its
// end. A body that does not arrive in time fails next's reads; what next
// then answers, or its abort, is replaced by 408 with a JSON-RPC error
// body, and the connection is closed. An answer whose head went out
// before the timeout stays, cut. With d ≤ 0, or no body, next is
// returned as it is.
func CutSlowBody(next http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) != nil {
			next.ServeHTTP(w, r) // no connection to set a deadline on
			return
		}
		b := &timedBody{rc: r.Body, ctl: rc}
		cw := &cutWriter{w: w, body: b}
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
		r.Body = b
		defer func() {
			b.handlerDone()
			v := recover()
			if v != nil && (v != http.ErrAbortHandler || cw.status != 0 || !b.timedOut.Load()) {
				panic(v)
			}
			if cw.status == 0 && b.timedOut.Load() {
				cw.WriteHeader(http.StatusRequestTimeout)
			}
		}()
		next.ServeHTTP(cw, r)
	})
}

type bodyKey struct{}

// BodyTimedOut reports whether the body of the request whose context is
// ctx did not arrive within CutSlowBody's deadline: a handler that fails
// for that reason may answer 408 itself.
func BodyTimedOut(ctx context.Context) bool {
	b, ok := ctx.Value(bodyKey{}).(*timedBody)
	return ok && b.timedOut.Load()
}

// timedBody is a request body under a read deadline. Read is called by
// whoever reads the body (a transport's goroutine), handlerDone by the
// handler's goroutine.
type timedBody struct {
	rc       io.ReadCloser
	ctl      *http.ResponseController
	timedOut atomic.Bool

	mu   sync.Mutex
	done bool // the handler returned: the connection is no longer ours
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.mu.Lock()
		if !b.done {
			// The body is in: the connection serves on without a deadline.
			_ = b.ctl.SetReadDeadline(time.Time{})
		}
		b.mu.Unlock()
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.timedOut.Store(true)
	}
	return n, err
}

func (b *timedBody) Close() error { return b.rc.Close() }

func (b *timedBody) handlerDone() {
	b.mu.Lock()
	b.done = true
	b.mu.Unlock()
}

// cutWriter answers 408 in place of what the handler answers once the
// body timed out. Only the handler's goroutine uses it.
type cutWriter struct {
	w       http.ResponseWriter
	body    *timedBody
	status  int  // 0 until the head is written
	swallow bool // the 408 went out: the handler's writes are dropped
}

func (c *cutWriter) Header() http.Header { return c.w.Header() }

// Unwrap lets http.ResponseController reach the connection.
func (c *cutWriter) Unwrap() http.ResponseWriter { return c.w }

func (c *cutWriter) WriteHeader(code int) {
	if c.status != 0 {
		return
	}
	if code < 200 {
		c.w.WriteHeader(code)
		return
	}
	if !c.body.timedOut.Load() {
		c.status = code
		c.w.WriteHeader(code)
		return
	}
	c.status, c.swallow = http.StatusRequestTimeout, true
	h := c.w.Header()
	clear(h)
	h.Set("Content-Type", "application/json")
	h.Set("Connection", "close")
	c.w.WriteHeader(http.StatusRequestTimeout)
	_, _ = io.WriteString(c.w, timeoutBody)
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.swallow {
		return len(p), nil
	}
	return c.w.Write(p)
}

// Flush implements http.Flusher.
func (c *cutWriter) Flush() {
	if !c.swallow {
		_ = http.NewResponseController(c.w).Flush()
	}
}
