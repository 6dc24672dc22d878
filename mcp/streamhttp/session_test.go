package streamhttp

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// initIDs initializes n sessions on h, served in-process, and returns
// their ids in order.
func initIDs(t *testing.T, h *Handler, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		req := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader(rpcBody(i, "initialize", "{}")))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("initialize %d: %d %s", i, rec.Code, rec.Body)
		}
		ids = append(ids, rec.Header().Get("MCP-Session-Id"))
	}
	return ids
}

// The same seeded reader gives the same session ids, in crypto/rand.Text's
// shape; another seed gives others.
func TestSessionIDsFromRand(t *testing.T) {
	run := func(seed byte) []string {
		var s [32]byte
		s[0] = seed
		h := NewHandler(newStubEndpoint(), &Options{Rand: rand.NewChaCha8(s), Logger: slog.New(slog.DiscardHandler)})
		defer h.Close()
		return initIDs(t, h, 5)
	}
	a, b, c := run(1), run(1), run(2)
	if !slices.Equal(a, b) {
		t.Fatalf("seed 1 gave %v, then %v", a, b)
	}
	seen := map[string]bool{}
	for _, id := range append(a, c...) {
		if len(id) != sessionIDLen || strings.Trim(id, sessionIDAlphabet) != "" {
			t.Fatalf("session id %q: want %d characters of %s", id, sessionIDLen, sessionIDAlphabet)
		}
		if seen[id] {
			t.Fatalf("session id %q drawn twice in %v and %v", id, a, c)
		}
		seen[id] = true
	}
}

// Without Rand the ids are crypto/rand.Text's: 26 base32 characters.
func TestSessionIDsDefault(t *testing.T) {
	h := NewHandler(newStubEndpoint(), &Options{Logger: slog.New(slog.DiscardHandler)})
	defer h.Close()
	ids := initIDs(t, h, 3)
	for _, id := range ids {
		if len(id) != sessionIDLen || strings.Trim(id, sessionIDAlphabet) != "" {
			t.Fatalf("session id %q", id)
		}
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("ids repeat: %v", ids)
	}
}

// A Rand that fails makes initialize fail with 500, and no session.
func TestSessionIDRandFails(t *testing.T) {
	ep := newStubEndpoint()
	h := NewHandler(ep, &Options{Rand: iotest.ErrReader(errors.New("no entropy")), Logger: slog.New(slog.DiscardHandler)})
	defer h.Close()
	req := httptest.NewRequest(http.MethodPost, DefaultPath, strings.NewReader(rpcBody(1, "initialize", "{}")))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("MCP-Session-Id") != "" {
		t.Fatalf("initialize with a failing Rand: %d, session %q", rec.Code, rec.Header().Get("MCP-Session-Id"))
	}
	if len(ep.sessions) != 0 {
		t.Fatal("a session was made")
	}
}
