package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/faults"
	"github.com/tasksim/tasksim/mcp/sse"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/sim/internal/harness"
	"github.com/tasksim/tasksim/traces"
)

// httpConn sends a script's HTTP requests to the target through a
// recording proxy (and the fault layer, when there are faults), and
// gathers what comes back, channel by channel.
type httpConn struct {
	url  string // the recording proxy's endpoint
	hc   *http.Client
	ids  *idMap
	mu   sync.Mutex
	live map[uint64]*liveChan // by recorded exchange: the last request sent with its id
	// sent holds every request's channel, so that close cuts them all:
	// a trace may give two exchanges one id (an edited or imported
	// trace), and the first one's stream stays open until cut.
	sent []*liveChan
	wg   sync.WaitGroup
	stop func() // stops the proxy and the fault layer
}

// startHTTP puts a recorder (writing to w) and, with faults in set, the
// fault layer between the replay and the target URL:
//
//	replay ──▶ recorder.Proxy ──▶ faults.Handler ──▶ ReverseProxy ──▶ target
//
// so the new trace holds what the replayed client saw, faults included,
// as tasksim proxy --record writes it.
func startHTTP(target string, w *traces.Writer, set *faults.Set, ids *idMap) (*httpConn, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not an http:// URL", ErrUnreachable, target)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	if c, err := net.DialTimeout("tcp", host, 5*time.Second); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrUnreachable, target, err)
	} else {
		c.Close()
	}
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	upstream := u
	if set != nil && len(set.Specs()) > 0 {
		rp := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = u.Scheme, u.Host, u.Host
				pr.Out.URL.Path = u.Path
				pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			},
			Transport:     recorder.NewTransport(),
			FlushInterval: -1,
			ErrorLog:      log.New(io.Discard, "", 0),
		}
		base, stop, err := harness.ServeLoopback(faults.Handler(rp, set, nil), nil)
		if err != nil {
			return nil, err
		}
		stops = append(stops, stop)
		upstream = &url.URL{Scheme: "http", Host: strings.TrimPrefix(base, "http://"), Path: u.Path}
	}
	// The gate keeps the replay's trace in causal order (harness.RecordGate).
	g := harness.NewRecordGate()
	p, err := recorder.NewProxy(upstream, w, &recorder.ProxyOptions{Transport: g.Transport(recorder.NewTransport())})
	if err != nil {
		stopAll()
		return nil, err
	}
	if set != nil {
		set.Observe(func(a faults.Applied) {
			p.Pipeline().AddFault(a.TraceFault(), a.Spec+" "+a.Target.String()+": "+a.Action.String())
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.Close()
		stopAll()
		return nil, err
	}
	hs := &http.Server{Handler: g.Handler(p), ConnState: p.ConnState, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(ln) }()
	stops = append(stops, func() {
		g.Settle()
		hs.Close()
		<-done
		p.Close()
		if set != nil {
			set.Observe(nil)
		}
	})
	pu := *upstream
	pu.Scheme, pu.Host = "http", ln.Addr().String()
	pu.Path = u.Path
	return &httpConn{
		url:  pu.String(),
		hc:   &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}},
		ids:  ids,
		live: map[uint64]*liveChan{},
		stop: stopAll,
	}, nil
}

func (c *httpConn) channel(st step) *liveChan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live[st.ch]
}

// dropHeaders are not replayed: the transport sets them for the live
// request (or, for Accept-Encoding, would then not decompress).
var dropHeaders = map[string]bool{
	"host": true, "content-length": true, "connection": true, "accept-encoding": true,
	"transfer-encoding": true, "keep-alive": true, "te": true, "upgrade": true,
}

// send starts the request of step st; its answer arrives on its channel.
func (c *httpConn) send(ctx context.Context, st step) error {
	h := st.rec.HTTP
	target, err := url.Parse(c.url)
	if err != nil {
		return err
	}
	if rec, err := url.Parse(h.URL); err == nil {
		target.RawQuery = rec.RawQuery
	}
	body := c.ids.rewriteRequest(st.body)
	rctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(rctx, h.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		cancel()
		return fmt.Errorf("record %d: %w", st.rec.Index, err)
	}
	for _, f := range h.Header {
		name := strings.ToLower(f.Name)
		if dropHeaders[name] {
			continue
		}
		v := f.Value
		switch name {
		case "mcp-session-id":
			if live, ok := c.ids.lookup(c.ids.session, v); ok {
				v = live
			}
		case "last-event-id":
			if live, ok := c.ids.lookup(c.ids.event, v); ok {
				v = live
			}
		case "mcp-name":
			v = c.ids.headerTask(v)
		}
		req.Header.Add(f.Name, v)
	}
	if len(body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	lc := newLiveChan()
	lc.cancel = cancel
	c.mu.Lock()
	c.live[st.ch] = lc
	c.sent = append(c.sent, lc)
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		resp, err := c.hc.Do(req)
		if err != nil {
			lc.end(err)
			return
		}
		defer resp.Body.Close()
		lc.update(func() { lc.status, lc.header = resp.StatusCode, resp.Header })
		lc.end(readLive(resp, lc))
	}()
	return nil
}

// readLive pushes the messages of a response body onto lc: each SSE block
// with fields, or the JSON body as one message.
func readLive(resp *http.Response, lc *liveChan) error {
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sp := sse.NewSplitter()
		buf := make([]byte, 32<<10)
		emit := func(block []byte, fields bool) error {
			if fields {
				lc.push(parseBlock(block))
			}
			return nil
		}
		tail := func(bool) error { return nil }
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_ = sp.Write(buf[:n], emit, tail)
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if len(bytes.TrimSpace(b)) > 0 {
		lc.push(liveItem{data: b})
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// close cuts every open request and stops the proxy.
func (c *httpConn) close() {
	c.mu.Lock()
	for _, lc := range c.sent {
		lc.cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
	c.hc.CloseIdleConnections()
	c.stop()
}
