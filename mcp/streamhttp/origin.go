package streamhttp

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/mcp"
)

// The DNS-rebinding defence (2025-11-25 Transports, "Security Warning":
// servers "MUST validate the Origin header on all incoming connections" and
// answer 403 when it is present and invalid).
//
// A browser page on evil.example whose name was rebound to 127.0.0.1 sends
// Origin: http://evil.example and Host: evil.example:PORT. Either header
// gives it away. Both checks apply on every connection an http.Server
// accepted, whatever address it arrived on: a server bound to all
// interfaces (--addr :PORT) is reachable on 127.0.0.1 too. A legitimate
// Host is a loopback name, a configured one, or the IP address the
// connection arrived on (a rebound page always sends a DNS name).

// Guard returns next behind the DNS-rebinding defence a Handler applies
// (with Options.AllowedOrigins and AllowedHosts): a request whose Origin
// or Host is not allowed gets 403 with a JSON-RPC error body and does not
// reach next. It is for a proxy in front of a server: a proxy that
// forwards with the upstream's own Host would otherwise let a rebound
// page through the upstream's check.
func Guard(next http.Handler, allowedOrigins, allowedHosts []string) http.Handler {
	g := newGuard(allowedOrigins, allowedHosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := g.check(r); why != "" {
			writeError(w, http.StatusForbidden, codeTransport, mcp.ID{}, "Forbidden: "+why)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// guard holds the Origin and Host allow-lists. It is read-only once built.
type guard struct {
	anyOrigin bool
	origins   map[string]bool // lower-case "scheme://host[:port]"
	anyHost   bool
	hosts     map[string]bool // lower-case "host" or "host:port"
}

func newGuard(origins, hosts []string) *guard {
	g := &guard{origins: map[string]bool{}, hosts: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			g.anyOrigin = true
		}
		g.origins[normalizeOrigin(o)] = true
	}
	for _, h := range hosts {
		if h == "*" {
			g.anyHost = true
		}
		g.hosts[strings.ToLower(h)] = true
	}
	return g
}

// check returns "" when r may proceed, or why it may not.
func (g *guard) check(r *http.Request) string {
	if origins, ok := r.Header["Origin"]; ok {
		for _, o := range origins {
			if !g.originAllowed(o) {
				return "Origin " + quoteHeader(o) + " is not allowed"
			}
		}
	}
	if local, ok := localAddr(r); ok && r.Host != "" && !g.anyHost && !g.hostAllowed(r.Host) && !isAddrHost(r.Host, local) {
		return "Host " + quoteHeader(r.Host) + " is not allowed"
	}
	return ""
}

// originAllowed reports whether an Origin header value is accepted: one of
// the configured origins, or http(s) on a loopback name with any port. The
// opaque origin "null" is accepted only when configured.
func (g *guard) originAllowed(origin string) bool {
	o := normalizeOrigin(origin)
	if g.anyOrigin || g.origins[o] {
		return true
	}
	scheme, host, ok := strings.Cut(o, "://")
	if !ok || (scheme != "http" && scheme != "https") || strings.ContainsAny(host, "/?#@ ") {
		return false
	}
	name, ok := splitHostPort(host)
	return ok && isLoopbackName(name)
}

// hostAllowed reports whether a Host header value is accepted: a loopback
// name with any port, or an AllowedHosts entry matching the whole value or
// its name without the port.
func (g *guard) hostAllowed(host string) bool {
	h := strings.ToLower(host)
	if g.hosts[h] {
		return true
	}
	name, ok := splitHostPort(h)
	if !ok {
		return false
	}
	return isLoopbackName(name) || g.hosts[name] || (strings.HasPrefix(name, "[") && g.hosts[strings.Trim(name, "[]")])
}

// normalizeOrigin lower-cases an origin and drops one trailing slash.
func normalizeOrigin(o string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(o), "/"))
}

// splitHostPort splits "name[:port]" where name may be a bracketed IPv6
// literal, and checks that the port, if any, is decimal. The name keeps its
// brackets.
func splitHostPort(hp string) (name string, ok bool) {
	name, port := hp, ""
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", false
		}
		name, port = hp[:end+1], hp[end+1:]
		if port != "" {
			if port[0] != ':' {
				return "", false
			}
			port = port[1:]
		}
	} else if i := strings.LastIndexByte(hp, ':'); i >= 0 {
		name, port = hp[:i], hp[i+1:]
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", false
		}
	}
	return name, name != ""
}

// isLoopbackName reports whether a host name (IPv6 in brackets) is one of
// the loopback names: localhost, 127.0.0.1, [::1].
func isLoopbackName(name string) bool {
	return name == "localhost" || name == "127.0.0.1" || name == "[::1]"
}

// localAddr returns the address the request's connection was accepted
// on. Requests not made by an http.Server (tests with a ResponseRecorder,
// in-memory transports) carry none: they did not come over a network and
// are not Host-checked.
func localAddr(r *http.Request) (netip.Addr, bool) {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return netip.Addr{}, false
	}
	if tcp, ok := addr.(*net.TCPAddr); ok {
		a, ok := netip.AddrFromSlice(tcp.IP)
		return a.Unmap(), ok
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return ap.Addr().Unmap(), err == nil
}

// isAddrHost reports whether a Host header value is the IP literal of
// local, the address the connection arrived on, with any port.
func isAddrHost(host string, local netip.Addr) bool {
	name, ok := splitHostPort(host)
	if !ok {
		return false
	}
	a, err := netip.ParseAddr(strings.Trim(name, "[]"))
	return err == nil && a.Unmap() == local.WithZone("")
}

// quoteHeader quotes a header value for an error message, cut short.
func quoteHeader(v string) string {
	if len(v) > 100 {
		v = v[:100] + "..."
	}
	return strconv.Quote(v)
}
