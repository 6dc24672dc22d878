//go:build !linux

package h1

import "net"

// alive reports whether an idle connection is still open; off Linux it
// is not checked, and a request on a connection the server closed is
// retried when it can be sent twice (Transport.RoundTrip).
func alive(nc net.Conn) bool { return true }
