package httplimit

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// refusedBody is the body of what a connection past MaxConns gets before it is
// closed: 503 with a JSON-RPC error body, as the reference server's
// transport answers its own caps (docs/server.md, "Limits").
const refusedBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Service Unavailable: the server has too many connections open, its limit"}}`

var refusedResponse = []byte("HTTP/1.1 503 Service Unavailable\r\n" +
	"Content-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n" +
	"Content-Length: " + itoa(len(refusedBody)) + "\r\n\r\n" + refusedBody)

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// refuseTimeout bounds what a refused connection may cost: reading its
// request head and writing the 503.
const refuseTimeout = time.Second

// Listener accepts at most max connections open at once. One more is
// accepted, answered 503 and closed at once, rather than left in the
// kernel's queue: a client learns why, and file descriptors stay bounded
// (Hardening item 4: 1,100 slow bodies exhausted them and locked out a
// legitimate client).
type Listener struct {
	net.Listener
	slots   chan struct{}
	refused atomic.Int64
}

// NewListener caps the connections l accepts at max open at once (max >
// 0; see Limits.MaxConns for the default).
func NewListener(l net.Listener, max int) *Listener {
	return &Listener{Listener: l, slots: make(chan struct{}, max)}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			l.refused.Add(1)
			go refuse(c)
		}
	}
}

// Open returns the connections open, each holding a slot.
func (l *Listener) Open() int { return len(l.slots) }

// Refused returns the connections refused so far, past the cap.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// refuse reads what the client sent first, so that closing does not reset
// the connection before the answer is read, then answers 503 and closes.
func refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(refuseTimeout))
	var buf [4096]byte
	_, _ = c.Read(buf[:])
	_, _ = c.Write(refusedResponse)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_, _ = c.Read(buf[:]) // until the client closes, or the deadline
	}
}

// limitConn gives its slot back when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
