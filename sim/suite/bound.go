package suite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// How a scenario stays within its timeout, whatever the target does.
//
// Every wait of a scenario hangs on Env.Ctx, which ends at the timeout.
// What a scenario does after it does not: closing its sessions (a DELETE,
// a cancel notice, a stdio server's exit), the recorder's settle. Those
// get closeGrace; then the scenario is cut: every HTTP exchange it began
// ends (boundedClient), every connection it opened closes, the recording
// proxy stops. A scenario that does not return closeGrace after its
// timeout is cut the same way and, if it still does not return, left
// behind and reported (a bug of the suite, not of the target):
//
//	timeout ──closeGrace──▶ cut ──closeGrace──▶ given up
//	Run returns ──▶ close sessions ──closeGrace──▶ cut ──closeGrace──▶ given up
//	                                     └─ closed ──▶ settle, stop proxy, judge
//
// A run of one scenario against a target that never answers thus ends at
// most about 2×closeGrace past --timeout, plus the recorder's settle
// (settleBound) and judging.

// closeGrace bounds each step of a scenario past its timeout: its return
// once Env.Ctx ended, the close of its sessions, the wait after a cut.
const closeGrace = 2 * time.Second

// stdioGrace is how long a stdio server of the suite has to exit once its
// stdin is closed, and then once asked to end (SIGTERM), before it is
// killed: within closeGrace together.
const stdioGrace = closeGrace / 2

// boundedClient returns the HTTP client of a scenario (or of the probe):
// no redirects followed (noRedirects), and every request, whatever its own
// context (a closing session's DELETE carries one of its own), ends once
// hard does, its body included.
func boundedClient(hard context.Context) *http.Client {
	return &http.Client{CheckRedirect: noRedirects.CheckRedirect, Transport: boundTransport{hard: hard}}
}

type boundTransport struct{ hard context.Context }

func (t boundTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(t.hard, cancel)
	end := func() { stop(); cancel() }
	resp, err := http.DefaultTransport.RoundTrip(r.WithContext(ctx))
	if err != nil {
		end()
		return nil, err
	}
	resp.Body = &boundBody{ReadCloser: resp.Body, end: end}
	return resp, nil
}

// boundBody releases its request's context once closed.
type boundBody struct {
	io.ReadCloser
	once sync.Once
	end  func()
}

func (b *boundBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.end)
	return err
}

// trackedTransport hands every connection it opens to track, and uses the
// connection track returns.
type trackedTransport struct {
	inner mcp.Transport
	track func(mcp.Conn) mcp.Conn
}

func (t trackedTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return t.track(c), nil
}

// unanswered keeps the requests sent on the scenario's connections that
// got no answer yet, so that a scenario cut by its timeout says what it
// waited for.
type unanswered struct {
	mu      sync.Mutex
	pending map[pendingKey]string // the request's method
}

type pendingKey struct {
	conn int
	id   string
}

// watch returns c noting, as connection n, each request written and each
// answer read.
func (u *unanswered) watch(n int, c mcp.Conn) mcp.Conn {
	return mcp.Decorate(c, mcp.ConnFuncs{
		Write: func(ctx context.Context, inner mcp.Conn, msg *mcp.Message) error {
			if msg.Kind() == mcp.KindRequest {
				u.mu.Lock()
				if u.pending == nil {
					u.pending = map[pendingKey]string{}
				}
				u.pending[pendingKey{n, msg.ID.String()}] = msg.Method
				u.mu.Unlock()
			}
			return inner.Write(ctx, msg)
		},
		Read: func(ctx context.Context, inner mcp.Conn) (*mcp.Message, error) {
			msg, err := inner.Read(ctx)
			if err == nil && msg.Kind() == mcp.KindResponse && !mcp.MoreToFollow(msg.Result) {
				u.mu.Lock()
				delete(u.pending, pendingKey{n, msg.ID.String()})
				u.mu.Unlock()
			}
			return msg, err
		},
	})
}

// String lists the requests without an answer, "" if none.
func (u *unanswered) String() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for k, method := range u.pending {
		out = append(out, fmt.Sprintf("%s (id %s, connection %d)", method, k.id, k.conn))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// waitFor waits for done, at most d; it reports whether done came.
func waitFor(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// endWithin runs f on a goroutine of its own and waits for it: once
// after is closed, closeGrace more; then it calls cut, which ends what f
// waits on, and waits closeGrace more. It reports whether f returned; if
// not, f is left behind.
func endWithin(after <-chan struct{}, cut func(), f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return true
	case <-after:
	}
	if waitFor(done, closeGrace) {
		return true
	}
	cut()
	return waitFor(done, closeGrace)
}

// closedChan is closed: endWithin's "after" for a grace that starts now.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
