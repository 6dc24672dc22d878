package streamhttp

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"
)

// These tests depend on time (MaxStreamDuration, KeepAlive). They run
// over real sockets, which testing/synctest cannot fake (a goroutine
// blocked on the network is not durably blocked in a bubble), so they use
// short durations and wait for the resulting event with srvWait; no
// assertion depends on how long anything took.

func TestMaxStreamDuration(t *testing.T) {
	t.Run("POST stream resumes losing nothing", func(t *testing.T) {
		f := newSrvFixture(t, &Options{MaxStreamDuration: 50 * time.Millisecond, Retry: 5 * time.Millisecond})
		sid, s := f.initSession()
		s.release(1)
		c := srvOpenSSE(t, f.post(sid, rpcBody(1, "stream", `{"n":4}`)))
		if ev := c.next(); ev.ID != "1_0" || ev.Retry != 5*time.Millisecond {
			t.Fatalf("priming %+v", ev)
		}
		last, _ := c.message()
		srvWaitReply(t, s)
		end := c.end()
		if !end.hasRetry || end.retry != 5*time.Millisecond {
			t.Fatalf("closed without a retry field (retry %v, %v)", end.retry, end.hasRetry)
		}
		var got []string
		final := false
		for resumes := 0; !final; resumes++ {
			if resumes > 50 {
				t.Fatalf("no end after %d resumes; got %v", resumes, got)
			}
			s.release(1)
			srvWaitReply(t, s)
			r := srvOpenSSE(t, f.get(sid, last, nil))
			for {
				it := r.item()
				if it.err != nil {
					break
				}
				last = it.ev.ID
				got = append(got, it.ev.ID)
				if m := decodeMsg(t, it.ev.Data); m.Result != nil {
					final = true
				}
			}
		}
		if fmt.Sprint(got) != "[1_2 1_3 1_4 1_5]" {
			t.Fatalf("events after the first connection: %v", got)
		}
	})
	t.Run("GET stream is closed with a retry field", func(t *testing.T) {
		f := newSrvFixture(t, &Options{MaxStreamDuration: 20 * time.Millisecond})
		sid, s := f.initSession()
		g := srvOpenSSE(t, f.get(sid, "", nil))
		priming := g.next().ID
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
}

func TestKeepAlive(t *testing.T) {
	f := newSrvFixture(t, &Options{KeepAlive: 5 * time.Millisecond})
	sid, _ := f.initSession()
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
	timeout := time.After(srvWait)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stream ended before a keep-alive")
			}
			if strings.HasPrefix(l, ":") {
				return
			}
		case <-timeout:
			t.Fatal("no keep-alive comment")
		}
	}
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
	}
}
