package streamhttp

import (
	"bufio"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// These tests depend on time (MaxStreamDuration, KeepAlive): the fixture's
// handler runs on a clock.Sim, and a connection's time is up exactly when
// the test advances the clock past it, never before.

func TestMaxStreamDuration(t *testing.T) {
	t.Run("POST stream resumes losing nothing", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			const max = 50 * time.Millisecond
			f := newSrvFixture(t, &Options{MaxStreamDuration: max, Retry: 5 * time.Millisecond})
			sid, s := f.initSession()
			s.release(1)
			c := srvOpenSSE(t, f.post(sid, rpcBody(1, "stream", `{"n":4}`)))
			if ev := c.next(); ev.ID != "1_0" || ev.Retry != 5*time.Millisecond {
				t.Fatalf("priming %+v", ev)
			}
			last, _ := c.message()
			srvWaitReply(t, s)
			f.advance(max - time.Millisecond)
			c.none() // not a moment early
			f.advance(time.Millisecond)
			end := c.end()
			if !end.hasRetry || end.retry != 5*time.Millisecond {
				t.Fatalf("closed without a retry field (retry %v, %v)", end.retry, end.hasRetry)
			}

			// The stream goes on without a connection.
			s.release(1)
			srvWaitReply(t, s)
			var got []string
			read := func(c *srvSSE, n int) {
				t.Helper()
				for range n {
					id, _ := c.message()
					last = id
					got = append(got, id)
				}
			}
			r := srvOpenSSE(t, f.get(sid, last, nil))
			read(r, 1) // replayed
			s.release(1)
			read(r, 1) // live
			f.advance(max)
			if end := r.end(); !end.hasRetry {
				t.Fatal("the resumed connection was closed without a retry field")
			}
			s.release(2)
			srvWaitReply(t, s)
			srvWaitReply(t, s)
			r = srvOpenSSE(t, f.get(sid, last, nil))
			read(r, 2)
			r.end() // after the final response, before its time is up
			if fmt.Sprint(got) != "[1_2 1_3 1_4 1_5]" {
				t.Fatalf("events after the first connection: %v", got)
			}
		})
	})
	t.Run("GET stream is closed with a retry field", func(t *testing.T) {
		srvTest(t, func(t *testing.T) {
			f := newSrvFixture(t, &Options{MaxStreamDuration: 20 * time.Millisecond})
			sid, s := f.initSession()
			g := srvOpenSSE(t, f.get(sid, "", nil))
			priming := g.next().ID
			g.none()
			f.advance(20 * time.Millisecond)
			if end := g.end(); !end.hasRetry || end.retry != DefaultRetry {
				t.Fatalf("retry %v %v", end.retry, end.hasRetry)
			}
			if err := s.out.Send(t.Context(), outboxNote(1)); err != nil {
				t.Fatal(err)
			}
			r := srvOpenSSE(t, f.get(sid, priming, nil))
			if id, m := r.message(); id != "0_1" || string(m.Params) != `{"n":1}` {
				t.Fatalf("resumed: %s %s", id, m.Params)
			}
		})
	})
}

// An idle SSE connection gets a comment every KeepAlive, and only then; an
// event resets the interval.
func TestKeepAlive(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		const ka = 5 * time.Second
		f := newSrvFixture(t, &Options{KeepAlive: ka})
		sid, s := f.initSession()
		resp := f.get(sid, "", nil)
		defer resp.Body.Close()
		lines := make(chan string, 64)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		event := func() []string {
			t.Helper()
			var ev []string
			for {
				l, ok := <-lines
				if !ok {
					t.Fatalf("the stream ended after %q", ev)
				}
				if l == "" {
					return ev
				}
				ev = append(ev, l)
			}
		}
		quiet := func() {
			t.Helper()
			synctest.Wait()
			select {
			case l := <-lines:
				t.Fatalf("got %q, want nothing yet", l)
			default:
			}
		}
		event() // priming
		f.advance(ka - time.Millisecond)
		quiet()
		f.advance(time.Millisecond)
		if ev := event(); fmt.Sprint(ev) != "[: ping]" {
			t.Fatalf("want a keep-alive comment, got %q", ev)
		}
		f.advance(ka / 2)
		if err := s.out.Send(t.Context(), outboxNote(1)); err != nil {
			t.Fatal(err)
		}
		if ev := await(t, lines, "the message"); ev != "id: 0_1" {
			t.Fatalf("want the message, got %q", ev)
		}
		event()
		f.advance(ka - time.Millisecond)
		quiet()
		f.advance(time.Millisecond)
		if ev := event(); fmt.Sprint(ev) != "[: ping]" {
			t.Fatalf("want a keep-alive comment a whole interval after the message, got %q", ev)
		}
	})
}

func TestCloseConnection(t *testing.T) {
	cases := []struct {
		name   string
		after  int
		resume string // Last-Event-ID the client has when the connection ends
		final  string // id of the final event
	}{
		{name: "before any reply", after: 0, resume: "1_0", final: "1_1"},
		{name: "after two messages", after: 2, resume: "1_2", final: "1_3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srvTest(t, func(t *testing.T) {
				f := newSrvFixture(t, nil)
				sid, s := f.initSession()
				c := srvOpenSSE(t, f.post(sid, rpcBody(1, "closeconn", fmt.Sprintf(`{"after":%d}`, tc.after))))
				last := c.next().ID
				for range tc.after {
					last, _ = c.message()
				}
				if end := c.end(); last != tc.resume || !end.hasRetry {
					t.Fatalf("connection ended at %s (retry %v), want %s with a retry field", last, end.hasRetry, tc.resume)
				}
				s.release(1)
				srvWaitReply(t, s)
				r := srvOpenSSE(t, f.get(sid, last, nil))
				if id, m := r.message(); id != tc.final || m.Result == nil {
					t.Fatalf("resumed: %s %+v", id, m)
				}
				r.end()
			})
		})
	}
}
