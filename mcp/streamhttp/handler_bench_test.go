package streamhttp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/sse"
)

// srvBenchEndpoint answers "ping" at once with {} and "tick" with one
// notification per value on ticks, then a response when ticks closes.
type srvBenchEndpoint struct{ ticks chan struct{} }

func (e *srvBenchEndpoint) NewSession(mcp.Outbox) mcp.Session { return srvBenchSession{e} }

type srvBenchSession struct{ e *srvBenchEndpoint }

func (srvBenchSession) Close() {}

var srvEmptyResult = []byte(`{}`)

func (s srvBenchSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r == nil {
		return
	}
	if msg.Method != "tick" {
		_ = r.Reply(ctx, &mcp.Message{ID: msg.ID, Result: srvEmptyResult}, true)
		return
	}
	go func() {
		note := &mcp.Message{Method: mcp.NotificationProgress, Params: []byte(`{"progressToken":1,"progress":1}`)}
		for range s.e.ticks {
			_ = r.Reply(ctx, note, false)
		}
		_ = r.Reply(ctx, &mcp.Message{ID: msg.ID, Result: srvEmptyResult}, true)
	}()
}

func srvBenchServer(b *testing.B, ep mcp.Endpoint) (url string, client *http.Client, sid string) {
	b.Helper()
	h := NewHandler(ep, &Options{Logger: slog.New(slog.DiscardHandler)})
	srv := httptest.NewServer(h)
	b.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, DisableCompression: true}}
	b.Cleanup(client.CloseIdleConnections)
	url = srv.URL + DefaultPath
	resp := srvBenchPOST(b, client, url, "", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if sid = resp.Header.Get(headerSession); sid == "" {
		b.Fatalf("initialize: %s", resp.Status)
	}
	return url, client, sid
}

func srvBenchPOST(b *testing.B, client *http.Client, url, sid string, body []byte) *http.Response {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return nil
	}
	req.Header["Accept"] = []string{"application/json, text/event-stream"}
	req.Header["Content-Type"] = valueJSON
	req.Header[headerProtocol] = []string{mcp.LatestProtocolVersion}
	if sid != "" {
		req.Header[headerSession] = []string{sid}
	}
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return nil
	}
	return resp
}

// BenchmarkPOSTJSON measures small JSON request/response round trips per
// second over loopback, client and server on the same machine, with
// keep-alive connections and concurrent clients in one session.
func BenchmarkPOSTJSON(b *testing.B) {
	url, client, sid := srvBenchServer(b, &srvBenchEndpoint{})
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp := srvBenchPOST(b, client, url, sid, body)
			if resp == nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %s", resp.Status)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkSSEEvent measures the latency of one event of a streamed
// answer: from the endpoint's Reply to the client reading the event.
func BenchmarkSSEEvent(b *testing.B) {
	ep := &srvBenchEndpoint{ticks: make(chan struct{}, 1)}
	url, client, sid := srvBenchServer(b, ep)
	ep.ticks <- struct{}{} // the first reply opens the stream
	resp := srvBenchPOST(b, client, url, sid, []byte(`{"jsonrpc":"2.0","id":1,"method":"tick"}`))
	if resp == nil {
		b.FailNow()
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body)
	for range 2 { // the priming event and the first notification
		if _, err := rd.Next(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ep.ticks <- struct{}{}
		if _, err := rd.Next(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(ep.ticks)
	if ev, err := rd.Next(); err != nil || ev.Data == "" {
		b.Fatalf("final event: %+v %v", ev, err)
	}
}
