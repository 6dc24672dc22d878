package mcp

import (
	"context"
	"testing"
)

// saysRevision is a Conn that reports r.
type saysRevision struct {
	Conn
	r Revision
}

func (s saysRevision) Revision() Revision { return s.r }

// TestRevisionOfConn finds the revision a Conn reports through decorators,
// and is zero for a Conn that reports none.
func TestRevisionOfConn(t *testing.T) {
	pass := ConnFuncs{Read: func(ctx context.Context, inner Conn) (*Message, error) { return inner.Read(ctx) }}
	for _, tc := range []struct {
		name string
		c    Conn
		want Revision
	}{
		{"plain", saysRevision{r: Revision20260728}, Revision20260728},
		{"decorated twice", Decorate(Decorate(saysRevision{r: Revision20251125}, pass), ConnFuncs{}), Revision20251125},
		{"says nothing", Decorate(saysRevision{}, pass), ""},
		{"no reporter", Decorate(struct{ Conn }{}, pass), ""},
	} {
		if got := RevisionOfConn(tc.c); got != tc.want {
			t.Errorf("%s: RevisionOfConn = %q, want %q", tc.name, got, tc.want)
		}
	}
}
