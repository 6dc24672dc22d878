package faults

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/tasksim/tasksim/clock"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/traces"
)

// DefaultMaxBody is the default of HTTPOptions.MaxBody.
const DefaultMaxBody = 16 << 20

// HTTPOptions configure the HTTP middleware. nil or zero values give the
// documented defaults.
type HTTPOptions struct {
	PlaceOptions
	// MaxBody is the largest JSON body (request or response) taken as one
	// message; a larger one passes unchanged, unseen by the faults. 0 means
	// DefaultMaxBody.
	MaxBody int
	// SplitRequests, when set, names the logical stream a request
	// belongs to within its session (its JSON-RPC id, its method; rpc is
	// nil for a request without a JSON body), and requests are numbered
	// within it: their StreamID is "request:<session>/<name>". Requests
	// of one session sent at one instant by two goroutines reach the
	// middleware in the scheduler's order; numbered within a logical
	// stream, a request keeps its identity, hence its decisions, from run
	// to run (as ConnOptions.Split does for a Conn). nil numbers every
	// request of a session in one stream, "request:<session>".
	SplitRequests func(rpc *traces.RPCFields) string
}

// Handler returns next with set's faults applied in the data path:
//
//	client ──request──▶ Decide(request) ──▶ next ──head, body──▶ Decide(each message) ──▶ client
//	                    status │ cut │ delay │ rewrite │ restart     drop │ duplicate │ delay │ hold │ cut │ stall │ rewrite
//
// Messages:
//
//   - every request is one (stream "request", StreamID "request:<session>",
//     N its position among the session's requests), its Raw the JSON-RPC
//     body of a POST. http-status answers it without calling next; a cut
//     aborts it before next sees it (a dropped request too); delay waits;
//     a rewrite (ttl-expiry) replaces the body, or sets a header
//     (wrong-mcp-name: Action.Header); a status with a body (wrong-replica:
//     Action.Raw) answers with that JSON; server-restart calls
//     Restart first. A request is not duplicated or held: those verbs,
//     which no built-in fault takes on a request, let it pass.
//   - a JSON (application/json) response body is one message of stream
//     "post" (or "get"), N=1, its head held back with it: dropped, the head
//     goes out with an empty body; duplicated, the body holds it twice;
//     cut before, no head; cut mid, half the body and a broken connection.
//   - a text/event-stream body is cut into whole events, each a message
//     (SSE, EventID, Raw its data) of stream "post" (StreamID
//     "post:<session>/<id of the POST>") or "get" ("get:<session>/<n-th
//     GET of the session>"), N its position among the stream's events.
//     The head and the blocks that are no event (comments, a lone retry)
//     pass at once and unchanged. Each event written is flushed. An
//     event over sse.MaxBlock is no message: it passes unchanged as its
//     bytes come, never gathered whole (Set.Oversize counts it).
//
// Sessions are named s1, s2, ... in the order the middleware first sees
// their Mcp-Session-Id (s0: none yet, as for initialize), so that stream
// names and the decisions drawn from them repeat from run to run when the
// server's session ids are random.
//
// A cut ends the response as a broken connection: writes of next fail
// from then on, its request's context is cancelled, and once next returns
// the middleware aborts with panic(http.ErrAbortHandler). A stall swallows
// everything next writes from then on and keeps the connection open until
// the request's context ends. The bytes of every message no fault acted
// on pass unchanged.
//
// With no fault in set, Handler returns next itself: nothing to look at.
func Handler(next http.Handler, set *Set, opts *HTTPOptions) http.Handler {
	if set == nil || len(set.faults) == 0 {
		return next
	}
	h := &httpFaults{next: next, set: set, sessions: map[string]*session{}}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.Clock = clock.Or(h.opts.Clock)
	if h.opts.MaxBody <= 0 {
		h.opts.MaxBody = DefaultMaxBody
	}
	return h
}

type httpFaults struct {
	next http.Handler
	set  *Set
	opts HTTPOptions

	mu       sync.Mutex
	sessions map[string]*session // by Mcp-Session-Id
	nsess    int
}

type session struct {
	name           string
	requests, gets int
	byKey          map[string]int // requests per logical stream (SplitRequests)
}

// session returns the session named by id, naming it on first sight.
func (h *httpFaults) session(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[id]
	if !ok {
		name := "s0"
		if id != "" {
			h.nsess++
			name = "s" + strconv.Itoa(h.nsess)
		}
		s = &session{name: name}
		h.sessions[id] = s
	}
	return s
}

func (h *httpFaults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sess := h.session(r.Header.Get("Mcp-Session-Id"))
	h.mu.Lock()
	sess.requests++
	n := sess.requests
	getN := 0
	if r.Method == http.MethodGet {
		sess.gets++
		getN = sess.gets
	}
	h.mu.Unlock()

	var body []byte
	if r.Method == http.MethodPost && r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(r.Body, int64(h.opts.MaxBody)+1))
		if err != nil {
			panic(http.ErrAbortHandler) // the client went away mid-body
		}
		if len(b) > h.opts.MaxBody {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		} else {
			body = b
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
	}
	req := NewMsg(PlaceHTTP, StreamRequest, "request:"+sess.name, n, traces.DirClientToServer, body)
	req.Revision = rev.RequestRevision(r.Header, req.Method(), paramsOf(req.RPC, body))
	if h.opts.SplitRequests != nil {
		key := sess.name + "/" + h.opts.SplitRequests(req.RPC)
		h.mu.Lock()
		if sess.byKey == nil {
			sess.byKey = map[string]int{}
		}
		sess.byKey[key]++
		req.StreamID, req.N = "request:"+key, sess.byKey[key]
		h.mu.Unlock()
	}
	ctx := r.Context()
	out, err := h.opts.carryOut(ctx, h.set.Decide(req))
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	fate, rewrite := out.fate, out.rewrite
	if rewrite != nil {
		r.Body = io.NopCloser(bytes.NewReader(rewrite))
		r.ContentLength = int64(len(rewrite))
		r.Header.Set("Content-Length", strconv.Itoa(len(rewrite)))
	}
	if out.header != "" {
		r.Header.Set(out.header, out.value)
	}
	switch fate {
	case Status:
		answer(w, out)
		return
	case CutBefore, CutMid, Drop:
		panic(http.ErrAbortHandler)
	case Stall:
		<-ctx.Done()
		panic(http.ErrAbortHandler)
	}

	fw := &faultWriter{h: h, w: w, sess: sess, reqMethod: req.ReqMethod, revision: req.Revision}
	switch r.Method {
	case http.MethodPost:
		fw.stream = StreamPost
		id := "#" + strconv.Itoa(n)
		if req.RPC != nil && req.RPC.ID != "" {
			id = req.RPC.ID
		}
		fw.streamID = "post:" + sess.name + "/" + id
	case http.MethodGet:
		fw.stream, fw.streamID = StreamGet, "get:"+sess.name+"/"+strconv.Itoa(getN)
	}
	nctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fw.ctx, fw.cancel = nctx, cancel
	if fate == CutAfter {
		fw.cutNow() // the server gets the request; its answer is lost
	}
	h.next.ServeHTTP(fw, r.WithContext(nctx))
	fw.finish(ctx)
}

// answer answers a request the faults kept from the server: with the
// JSON body of out (wrong-replica), else with its status's text.
func answer(w http.ResponseWriter, out outcome) {
	if out.body == nil {
		http.Error(w, http.StatusText(out.status), out.status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(out.status)
	_, _ = w.Write(out.body)
}
