package cli

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/httplimit"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// ListenFlags are the flags of a command that accepts HTTP connections,
// named, defaulted and checked the same on serve, record and proxy
// (docs/security.md): where it may listen, the DNS-rebinding defence's
// allow-lists, and the connection limits.
type ListenFlags struct {
	// AllowRemote confirms a non-loopback listen address; without it one
	// is refused.
	AllowRemote bool
	// Origins and Hosts are accepted besides loopback ones (see
	// streamhttp.Options.AllowedOrigins, AllowedHosts).
	Origins, Hosts []string
	// MaxConns, BodyTimeout and IdleTimeout are httplimit.Limits'.
	MaxConns                 int
	BodyTimeout, IdleTimeout time.Duration
}

// add adds the flags to f; addrFlag names the command's listen address
// flag (--addr, --listen) in the help.
func (l *ListenFlags) add(f *pflag.FlagSet, addrFlag string) {
	f.StringSliceVar(&l.Origins, "allow-origin", nil, `Origin header values accepted besides loopback ones ("*" for any)`)
	f.StringSliceVar(&l.Hosts, "allow-host", nil, "Host header values accepted besides loopback ones and the address a connection arrived on")
	f.BoolVar(&l.AllowRemote, "allow-remote", false, "let "+addrFlag+" listen on a non-loopback address (refused without it; see docs/security.md)")
	f.IntVar(&l.MaxConns, "max-conns", 0, "connections open at once (503 above; 0: 8192, lowered to the open-file limit less 64)")
	f.DurationVar(&l.BodyTimeout, "body-timeout", streamhttp.DefaultBodyReadTimeout, "time to read a POST body (408 above)")
	f.DurationVar(&l.IdleTimeout, "idle-timeout", httplimit.DefaultIdleTimeout, "close a keep-alive connection idle this long")
}

// check returns a usage error for a bad limit.
func (l *ListenFlags) check() error {
	if l.MaxConns < 0 || l.BodyTimeout <= 0 || l.IdleTimeout <= 0 {
		return usagef("--body-timeout and --idle-timeout must be positive, --max-conns 0 or more")
	}
	return nil
}

// limits are the connection limits the flags say.
func (l *ListenFlags) limits() *httplimit.Limits {
	return &httplimit.Limits{MaxConns: l.MaxConns, BodyTimeout: l.BodyTimeout, IdleTimeout: l.IdleTimeout}
}

// checkBind refuses a listen address beyond loopback unless allowRemote:
// tasksim's servers and proxies have no authentication, so anyone who can
// reach the port can use them (and, through a proxy, its upstream). ":P"
// and "0.0.0.0:P" are every interface. A host name other than localhost
// is refused too: what it resolves to is not known before listening. It
// runs before listening; listen checks the address bound again.
func checkBind(flag, addr string, allowRemote bool) error {
	if allowRemote {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("%s %q: %v", flag, addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		return nil
	}
	what := "a non-loopback address"
	if host == "" || strings.Trim(host, "[]") == "0.0.0.0" || strings.Trim(host, "[]") == "::" {
		what = "every interface"
	}
	return usagef("%s %s listens on %s, reachable by other hosts and unauthenticated: bind 127.0.0.1, or pass --allow-remote", flag, addr, what)
}

// listen checks addr (checkBind) and listens on it; the address bound is
// checked again, as a name may have resolved beyond loopback.
func listen(flag, addr string, allowRemote bool) (net.Listener, error) {
	if err := checkBind(flag, addr, allowRemote); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if !allowRemote && !isLoopbackAddr(ln.Addr()) {
		ln.Close()
		return nil, usagef("%s %s listens on %s, not loopback: bind 127.0.0.1, or pass --allow-remote", flag, addr, ln.Addr())
	}
	return ln, nil
}

// isLoopbackAddr reports whether a listener's address is a loopback one.
// The unspecified address (0.0.0.0, ::) is every interface, not loopback.
func isLoopbackAddr(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
