package streamhttp

import (
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/mcp"
)

// note is an Outbox message with a number, to tell messages apart.
func outboxNote(n int) *mcp.Message {
	return &mcp.Message{Method: mcp.NotificationMessage, Params: []byte(fmt.Sprintf(`{"n":%d}`, n))}
}

func TestGETStatus(t *testing.T) {
	cases := []struct {
		name    string
		opts    *Options
		prepare func(t *testing.T, f *srvFixture, sid string, s *stubSession)
		noSID   bool
		sid     string
		lastID  string
		hdr     map[string]string
		status  int
	}{
		{name: "standalone stream", status: 200},
		{name: "Accept without text/event-stream", hdr: map[string]string{"Accept": "application/json"}, status: 406},
		{name: "Accept absent", hdr: map[string]string{"Accept": ""}, status: 406},
		{name: "Accept text/*", hdr: map[string]string{"Accept": "text/*"}, status: 200},
		{name: "no session id", noSID: true, status: 400},
		{name: "unknown session", sid: "nosuchsession", status: 404},
		{name: "unsupported protocol version", hdr: map[string]string{"MCP-Protocol-Version": "2020-01-01"}, status: 400},
		{name: "foreign Origin", hdr: map[string]string{"Origin": "https://evil.example"}, status: 403},
		{name: "malformed Last-Event-ID", lastID: "abc", status: 400},
		{name: "Last-Event-ID with leading zero", lastID: "0_01", status: 400},
		{name: "Last-Event-ID of a stream never opened", lastID: "7_1", status: 400},
		{name: "Last-Event-ID never sent", lastID: "0_5", status: 400},
		{name: "POST stream id with a priming counter", lastID: "1_0_1", status: 400},
		{name: "standalone priming id", lastID: "0_0_1", status: 200},
		{
			name: "events no longer stored", opts: &Options{EventStoreEvents: 2}, lastID: "0_1", status: 409,
			prepare: func(t *testing.T, f *srvFixture, sid string, s *stubSession) {
				for n := range 4 {
					if err := s.out.Send(t.Context(), outboxNote(n)); err != nil {
						t.Fatal(err)
					}
				}
			},
		},
		{
			name: "second standalone GET", status: 409,
			prepare: func(t *testing.T, f *srvFixture, sid string, s *stubSession) {
				srvOpenSSE(t, f.get(sid, "", nil)).next()
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srvTest(t, func(t *testing.T) {
				f := newSrvFixture(t, tc.opts)
				sid, s := f.initSession()
				if tc.prepare != nil {
					tc.prepare(t, f, sid, s)
				}
				switch {
				case tc.noSID:
					sid = ""
				case tc.sid != "":
					sid = tc.sid
				}
				resp := f.get(sid, tc.lastID, tc.hdr)
				if tc.status == 200 {
					c := srvOpenSSE(t, resp)
					if tc.lastID == "" {
						if ev := c.next(); ev.ID == "" || ev.Data != "" {
							t.Fatalf("priming event %+v", ev)
						}
					}
					return
				}
				body := bodyString(t, resp)
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
				}
				if code := bodyErrorCode(t, body); code != codeTransport {
					t.Errorf("JSON-RPC error code %d in %s", code, body)
				}
			})
		})
	}
}

func TestStandaloneStream(t *testing.T) {
	t.Run("queued then live", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			for n := range 3 {
				if err := s.out.Send(t.Context(), outboxNote(n)); err != nil {
					t.Fatal(err)
				}
			}
			g := srvOpenSSE(t, f.get(sid, "", nil))
			if ev := g.next(); ev.ID != "0_0_1" || ev.Data != "" || ev.Retry != DefaultRetry {
				t.Fatalf("priming event %+v", ev)
			}
			for n := range 3 {
				id, m := g.message()
				if want := fmt.Sprintf(`{"n":%d}`, n); id != fmt.Sprintf("0_%d", n+1) || string(m.Params) != want {
					t.Fatalf("queued message %d: id %s params %s", n, id, m.Params)
				}
			}
			if err := s.out.Send(t.Context(), outboxNote(3)); err != nil {
				t.Fatal(err)
			}
			if id, m := g.message(); id != "0_4" || string(m.Params) != `{"n":3}` {
				t.Fatalf("live message: id %s params %s", id, m.Params)
			}
		})
	})
	t.Run("queue drops the oldest beyond the store", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, &Options{EventStoreEvents: 3})
			sid, s := f.initSession()
			for n := range 5 {
				if err := s.out.Send(t.Context(), outboxNote(n)); err != nil {
					t.Fatal(err)
				}
			}
			g := srvOpenSSE(t, f.get(sid, "", nil))
			if ev := g.next(); ev.ID != "0_2_1" {
				t.Fatalf("priming event %+v, want id 0_2_1", ev)
			}
			for n := 2; n < 5; n++ {
				if id, m := g.message(); id != fmt.Sprintf("0_%d", n+1) || string(m.Params) != fmt.Sprintf(`{"n":%d}`, n) {
					t.Fatalf("message: id %s params %s", id, m.Params)
				}
			}
		})
	})
	t.Run("outbox messages never go on a POST stream", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			g := srvOpenSSE(t, f.get(sid, "", nil))
			g.next()
			s.release(1)
			p := srvOpenSSE(t, f.post(sid, rpcBody(1, "stream", `{"n":2}`)))
			p.next()
			for n := range 2 {
				if _, m := p.message(); srvProgressIndex(m) != n {
					t.Fatalf("POST stream message %+v", m)
				}
				if err := s.out.Send(t.Context(), outboxNote(n)); err != nil {
					t.Fatal(err)
				}
				if _, m := g.message(); string(m.Params) != fmt.Sprintf(`{"n":%d}`, n) {
					t.Fatalf("standalone message %s", m.Params)
				}
				s.release(1)
			}
			if _, m := p.message(); m.Result == nil {
				t.Fatalf("POST stream final %+v", m)
			}
			p.end()
		})
	})
	t.Run("a resuming GET replaces the standalone connection", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			g1 := srvOpenSSE(t, f.get(sid, "", nil))
			g1.next()
			if err := s.out.Send(t.Context(), outboxNote(0)); err != nil {
				t.Fatal(err)
			}
			id, _ := g1.message()
			g2 := srvOpenSSE(t, f.get(sid, id, nil))
			g1.end()
			if err := s.out.Send(t.Context(), outboxNote(1)); err != nil {
				t.Fatal(err)
			}
			if id, m := g2.message(); id != "0_2" || string(m.Params) != `{"n":1}` {
				t.Fatalf("after replacement: id %s params %s", id, m.Params)
			}
		})
	})
}

func TestEventIDsUniqueInSession(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		f := newSrvFixture(t, nil)
		sid, s := f.initSession()
		seen := map[string]bool{}
		add := func(id string, stream uint64) {
			t.Helper()
			if seen[id] {
				t.Fatalf("event id %s sent twice", id)
			}
			seen[id] = true
			if got, _, ok := parseEventID(id); !ok || got != stream {
				t.Fatalf("event id %s: stream %d ok %v, want stream %d", id, got, ok, stream)
			}
		}
		for k := uint64(1); k <= 3; k++ {
			s.release(3)
			c := srvOpenSSE(t, f.post(sid, rpcBody(int(k), "stream", `{"n":2}`)))
			add(c.next().ID, k)
			for range 3 {
				id, _ := c.message()
				add(id, k)
			}
			c.end()
			if err := s.out.Send(t.Context(), outboxNote(int(k))); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // two standalone connections, two priming events
			g := f.standaloneGET(sid)
			add(g.next().ID, 0)
			if err := s.out.Send(t.Context(), outboxNote(9)); err != nil {
				t.Fatal(err)
			}
			id, _ := g.message()
			add(id, 0)
			g.cut()
		}
	})
}

// standaloneGET opens the standalone stream once the server has seen the
// client close an earlier connection of it (until then a standalone GET
// gets 409): everything has run when the bubble settles.
func (f *srvFixture) standaloneGET(sid string) *srvSSE {
	f.t.Helper()
	synctest.Wait()
	return srvOpenSSE(f.t, f.get(sid, "", nil))
}

func TestResume(t *testing.T) {
	t.Run("cut, resume, cut again, resume, live, end", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			s.release(2)
			c := srvOpenSSE(t, f.post(sid, rpcBody(1, "stream", `{"n":6}`)))
			if ev := c.next(); ev.ID != "1_0" {
				t.Fatalf("priming %+v", ev)
			}
			var got []int
			last := ""
			read := func(c *srvSSE, n int) {
				t.Helper()
				for range n {
					id, m := c.message()
					if m.Method == mcp.NotificationMessage {
						t.Fatalf("a standalone message came on stream 1: %s", id)
					}
					last = id
					got = append(got, srvProgressIndex(m))
				}
			}
			read(c, 2)
			srvWaitReply(t, s)
			srvWaitReply(t, s)
			c.cut()

			// The endpoint carries on while no connection is there.
			if err := s.out.Send(t.Context(), outboxNote(0)); err != nil {
				t.Fatal(err)
			}
			s.release(2)
			srvWaitReply(t, s)
			srvWaitReply(t, s)

			r1 := srvOpenSSE(t, f.get(sid, last, nil))
			read(r1, 2)
			r1.cut()
			s.release(1)
			srvWaitReply(t, s)

			r2 := srvOpenSSE(t, f.get(sid, last, nil))
			read(r2, 1)
			s.release(2) // live: the last notification and the final response
			read(r2, 1)
			id, m := r2.message()
			if id != "1_7" || m.Result == nil {
				t.Fatalf("final: id %s %+v", id, m)
			}
			r2.end()
			if fmt.Sprint(got) != "[0 1 2 3 4 5]" {
				t.Fatalf("notifications %v, want each of 0..5 once, in order", got)
			}
		})
	})
	t.Run("a finished stream replays and ends", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, nil)
			sid, s := f.initSession()
			s.release(1)
			c := srvOpenSSE(t, f.post(sid, rpcBody(1, "stream", `{"n":2}`)))
			priming := c.next().ID
			c.message()
			c.cut()
			s.release(2)
			srvWaitReply(t, s)
			srvWaitReply(t, s)
			srvWaitReply(t, s)
			r := srvOpenSSE(t, f.get(sid, priming, nil))
			for i, want := range []string{"1_1", "1_2", "1_3"} {
				if id, _ := r.message(); id != want {
					t.Fatalf("replayed event %d: %s, want %s", i, id, want)
				}
			}
			r.end()
			// Resuming after the final event gives an empty stream that ends.
			srvOpenSSE(t, f.get(sid, "1_3", nil)).end()
		})
	})
}
