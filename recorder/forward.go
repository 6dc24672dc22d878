package recorder

import (
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strings"
)

// forward is ServeHTTP's way on a simulated clock (ProxyOptions.Clock),
// in place of httputil.ReverseProxy. ReverseProxy copies a response it
// flushes (every one, with its FlushInterval of -1) through a writer that
// also flushes from a time.AfterFunc of the wall clock: the head of an
// event stream with no event yet (the standalone GET) reaches the client
// from a goroutine of the runtime's timers. That goroutine belongs to no
// clock.Confine scope, so a simulation's clock could move while the head
// was on its way (clock.Idle saw everything of the run waiting) and a
// client's wait for it would time out at one run and not the next.
// forward does every step on the handler's goroutine: the head is
// flushed at once when the body streams (an event stream, or no length),
// and every write is flushed after it, as ReverseProxy's writer does.
//
// It forwards what an in-memory upstream needs: the request rewritten as
// ReverseProxy's Rewrite mode does (hop-by-hop headers dropped, forwarding
// headers left to rewrite), the response with its hop-by-hop headers
// dropped. No protocol upgrades, 1xx responses or trailers pass: the
// in-memory transport has none.
func (p *Proxy) forward(rw http.ResponseWriter, r *http.Request) {
	out := r.Clone(r.Context())
	if r.ContentLength == 0 {
		out.Body = nil
	}
	if out.Body != nil {
		defer out.Body.Close()
	}
	out.Close = false
	out.RequestURI = ""
	dropHopHeaders(out.Header)
	for _, k := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		out.Header.Del(k)
	}
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header.Set("User-Agent", "") // no default User-Agent upstream
	}
	p.rewrite(&httputil.ProxyRequest{In: r, Out: out})

	res, err := p.opts.Transport.RoundTrip(out)
	if err != nil {
		p.errorHandler(rw, r, err)
		return
	}
	defer res.Body.Close()
	_ = p.modifyResponse(res)
	dropHopHeaders(res.Header)
	h := rw.Header()
	for k, vv := range res.Header {
		h[k] = append(h[k], vv...)
	}
	rw.WriteHeader(res.StatusCode)
	flush := http.NewResponseController(rw).Flush
	if streams(res) {
		_ = flush()
	}
	if err := copyFlushed(rw, res.Body, flush); err != nil {
		// A broken copy aborts the response where a server can tell
		// (ReverseProxy's way); in memory the body just ends.
		if r.Context().Value(http.ServerContextKey) != nil {
			panic(http.ErrAbortHandler)
		}
		return
	}
}

// copyFlushed copies src to w, flushing after each write, and returns
// the first error but src's io.EOF.
func copyFlushed(w io.Writer, src io.Reader, flush func() error) error {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			_ = flush()
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// streams reports whether a response's body is one to pass on as it
// comes, head first: an event stream, or a body of unknown length (as
// ReverseProxy decides when to flush at once).
func streams(res *http.Response) bool {
	return mediaTypeIs(res.Header.Get("Content-Type"), "text/event-stream") || res.ContentLength == -1
}

func mediaTypeIs(v, want string) bool {
	v, _, _ = strings.Cut(v, ";")
	return strings.EqualFold(strings.TrimSpace(v), want)
}

// hopHeaders are the hop-by-hop headers of RFC 9110, section 7.6.1, that
// a proxy does not forward.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// dropHopHeaders removes the hop-by-hop headers from h, and the headers
// its Connection header names.
func dropHopHeaders(h http.Header) {
	for _, v := range h["Connection"] {
		for name := range strings.SplitSeq(v, ",") {
			if name = textproto.TrimString(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}
