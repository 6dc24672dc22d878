package cli

import (
	"log/slog"
	"net"
)

// warnRemoteBind warns when the server listens beyond loopback (--addr
// :PORT binds every interface) without --allow-remote: the reference
// server has no authentication, so anyone who can reach the port can run
// its tools. The Origin and Host checks stay on either way
// (docs/security.md).
func warnRemoteBind(log *slog.Logger, addr net.Addr, allowRemote bool) {
	if allowRemote || isLoopbackAddr(addr) {
		return
	}
	log.Warn("listening on a non-loopback address: any host that can reach it may use this server, which has no authentication; "+
		"bind 127.0.0.1 or pass --allow-remote to confirm", "addr", addr.String())
}

// isLoopbackAddr reports whether a listener's address is a loopback one.
// The unspecified address (0.0.0.0, ::) is every interface, not loopback.
func isLoopbackAddr(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
