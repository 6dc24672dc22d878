package streamhttp

import (
	"net/http"
	"testing"
	"time"
)

// An idle session ends once it has been idle for longer than
// SessionIdleTimeout, on the handler's clock, and not before; one with an
// open GET stream does not, nor one in use.
func TestSessionIdleTimeout(t *testing.T) {
	srvTest(t, func(t *testing.T) {
		const idle = 100 * time.Millisecond
		f := newSrvFixture(t, &Options{SessionIdleTimeout: idle})
		idleSID, _ := f.initSession()
		listening, _ := f.initSession()
		busy, _ := f.initSession()
		g := srvOpenSSE(t, f.get(listening, "", nil))
		g.next() // the priming event: attached

		// Watch the session table: a request would itself count as use.
		registered := func(sid string) bool {
			f.h.mu.RLock()
			defer f.h.mu.RUnlock()
			return f.h.sessions[sid] != nil
		}
		ping := func(sid string) int {
			resp := f.post(sid, rpcBody(2, "echo", ""))
			bodyString(t, resp)
			return resp.StatusCode
		}
		f.advance(idle / 2)
		if st := ping(busy); st != http.StatusOK {
			t.Fatalf("echo: %d", st)
		}
		f.advance(idle / 2)
		if !registered(idleSID) || !registered(busy) || !registered(listening) {
			t.Fatal("a session ended before its idle timeout")
		}
		f.advance(idle / 2)
		if registered(idleSID) {
			t.Fatal("a session idle for 1.5 timeouts (sweeps every quarter) is still there")
		}
		if !registered(busy) || !registered(listening) {
			t.Fatal("a session used half a timeout ago, or one with an open GET, was ended")
		}
		if st := ping(idleSID); st != http.StatusNotFound {
			t.Errorf("an ended idle session answered %d, want 404", st)
		}
		f.advance(10 * idle)
		if registered(busy) {
			t.Error("a session idle for long after its last request is still there")
		}
		if st := ping(listening); st != http.StatusOK {
			t.Errorf("a session with an open GET stream answered %d after the idle timeout, want 200", st)
		}
	})
}
