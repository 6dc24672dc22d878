package httplimit

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// timeoutBody is the body of a 408: a JSON-RPC error, as the reference
// server's transport answers a slow body (docs/server.md, "Limits").
const timeoutBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Request Timeout: the body did not arrive in time"}}`

// CutSlowBody returns next with a deadline of d on reading each request's
// body, for a handler that streams the body on rather than reading it
// whole (a proxy). A timer starts when the request reaches next and
// stops at the body's end. When it fires first, the request is marked
// (BodyTimedOut) and then the connection's read deadline is set in the
// past, which fails next's reads of the body: the mark comes first, so
// whoever sees a read fail, or the request's context end (net/http ends
// it on a failed read), finds the reason. What next then answers, or its
// abort, is replaced by 408 with a JSON-RPC error body, and the
// connection is closed. An answer whose head went out before the timeout
// stays, cut. With d ≤ 0, or no body, next is returned as it is.
func CutSlowBody(next http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &timedBody{rc: r.Body, ctl: http.NewResponseController(w)}
		b.timer = time.AfterFunc(d, b.expire)
		cw := &cutWriter{w: w, body: b}
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
		r.Body = b
		defer func() {
			b.stop()
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

// longAgo is a read deadline that has passed.
var longAgo = time.Unix(1, 0)

type bodyKey struct{}

// BodyTimedOut reports whether the body of the request whose context is
// ctx did not arrive within CutSlowBody's deadline: a handler that fails
// for that reason may answer 408 itself.
func BodyTimedOut(ctx context.Context) bool {
	b, ok := ctx.Value(bodyKey{}).(*timedBody)
	return ok && b.timedOut.Load()
}

// timedBody is a request body under a timer. Read is called by whoever
// reads the body (a transport's goroutine), expire by the timer, stop by
// the handler's goroutine when it returns.
type timedBody struct {
	rc       io.ReadCloser
	ctl      *http.ResponseController
	timer    *time.Timer
	timedOut atomic.Bool

	mu      sync.Mutex
	settled bool // the body ended, or the handler returned: the timer has nothing to cut
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.stop()
	}
	return n, err
}

func (b *timedBody) Close() error { return b.rc.Close() }

// expire marks the body late, then fails its reads.
func (b *timedBody) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.settled {
		return
	}
	b.settled = true
	b.timedOut.Store(true)
	// Without a connection to set it on (an in-memory request), reads end
	// only with the client; the mark still makes the answer 408.
	_ = b.ctl.SetReadDeadline(longAgo)
}

// stop ends the timer: the body is in, or the handler returned and the
// connection is no longer the request's.
func (b *timedBody) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settled = true
	b.timer.Stop()
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
