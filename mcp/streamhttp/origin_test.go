package streamhttp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestOriginAllowed(t *testing.T) {
	cases := []struct {
		name    string
		allowed []string
		origin  string
		want    bool
	}{
		{name: "localhost", origin: "http://localhost", want: true},
		{name: "localhost with port", origin: "http://localhost:6274", want: true},
		{name: "https localhost", origin: "https://localhost:8443", want: true},
		{name: "127.0.0.1", origin: "http://127.0.0.1:3000", want: true},
		{name: "IPv6 loopback", origin: "http://[::1]:3000", want: true},
		{name: "upper case", origin: "HTTP://LOCALHOST:3000", want: true},
		{name: "trailing slash", origin: "http://localhost:3000/", want: true},
		{name: "foreign", origin: "http://evil.example.com", want: false},
		{name: "loopback-looking subdomain", origin: "http://localhost.evil.example", want: false},
		{name: "userinfo trick", origin: "http://localhost@evil.example", want: false},
		{name: "path", origin: "http://localhost/x", want: false},
		{name: "other scheme", origin: "file://localhost", want: false},
		{name: "bad port", origin: "http://localhost:80a", want: false},
		{name: "other loopback address", origin: "http://127.0.0.2", want: false},
		{name: "null", origin: "null", want: false},
		{name: "empty", origin: "", want: false},
		{name: "configured", allowed: []string{"https://app.example.com"}, origin: "https://app.example.com", want: true},
		{name: "configured, case and slash", allowed: []string{"https://App.Example.com/"}, origin: "https://app.example.COM", want: true},
		{name: "configured, other port", allowed: []string{"https://app.example.com"}, origin: "https://app.example.com:444", want: false},
		{name: "configured null", allowed: []string{"null"}, origin: "null", want: true},
		{name: "wildcard", allowed: []string{"*"}, origin: "http://evil.example.com", want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := newGuard(tc.allowed, nil).originAllowed(tc.origin); got != tc.want {
				t.Errorf("originAllowed(%q) = %v, want %v", tc.origin, got, tc.want)
			}
		})
	}
}

func TestHostAllowed(t *testing.T) {
	cases := []struct {
		name    string
		allowed []string
		host    string
		want    bool
	}{
		{name: "localhost", host: "localhost", want: true},
		{name: "localhost with port", host: "localhost:7070", want: true},
		{name: "127.0.0.1 with port", host: "127.0.0.1:7070", want: true},
		{name: "IPv6 loopback", host: "[::1]:7070", want: true},
		{name: "upper case", host: "LOCALHOST:1", want: true},
		{name: "foreign", host: "evil.example.com", want: false},
		{name: "foreign with port", host: "evil.example.com:7070", want: false},
		{name: "bad port", host: "localhost:x", want: false},
		{name: "unclosed bracket", host: "[::1", want: false},
		{name: "configured name, any port", allowed: []string{"mcp.internal"}, host: "mcp.internal:8080", want: true},
		{name: "configured host:port", allowed: []string{"mcp.internal:8080"}, host: "mcp.internal:8080", want: true},
		{name: "configured host:port, other port", allowed: []string{"mcp.internal:8080"}, host: "mcp.internal:9090", want: false},
		{name: "configured IPv6", allowed: []string{"fd00::1"}, host: "[fd00::1]:80", want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := newGuard(nil, tc.allowed).hostAllowed(tc.host); got != tc.want {
				t.Errorf("hostAllowed(%q) = %v, want %v", tc.host, got, tc.want)
			}
		})
	}
}

func TestGuardCheck(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7070}
	public := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 7070}
	cases := []struct {
		name   string
		local  net.Addr
		host   string
		origin string
		hosts  []string
		ok     bool
	}{
		{name: "loopback, loopback host", local: loopback, host: "127.0.0.1:7070", ok: true},
		{name: "loopback, foreign host", local: loopback, host: "evil.example.com:7070", ok: false},
		{name: "loopback, foreign host, wildcard", local: loopback, host: "evil.example.com", hosts: []string{"*"}, ok: true},
		{name: "public address, foreign host", local: public, host: "mcp.example.com", ok: false},
		{name: "public address, its own IP", local: public, host: "192.0.2.1:7070", ok: true},
		{name: "public address, another IP", local: public, host: "192.0.2.2:7070", ok: false},
		{name: "public address, configured host", local: public, host: "mcp.example.com", hosts: []string{"mcp.example.com"}, ok: true},
		{name: "public address, loopback name", local: public, host: "localhost:7070", ok: true},
		{name: "IPv6 address, its own IP", local: &net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 7070}, host: "[2001:db8::1]:7070", ok: true},
		{name: "no local address", host: "evil.example.com", ok: true},
		{name: "foreign origin anywhere", local: public, host: "192.0.2.1", origin: "https://evil.example", ok: false},
		{name: "loopback origin", local: loopback, host: "localhost:7070", origin: "http://localhost:5173", ok: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://"+tc.host+"/mcp", nil)
			r.Host = tc.host
			if tc.local != nil {
				r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if why := newGuard(nil, tc.hosts).check(r); (why == "") != tc.ok {
				t.Errorf("check = %q, want ok %v", why, tc.ok)
			}
		})
	}
}
