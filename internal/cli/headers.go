package cli

import (
	"net/http"
	"strings"

	"github.com/spf13/pflag"
)

// HeaderOptions are the flags that add HTTP headers to every request a
// command sends to a server: --header 'Name: value' (repeatable) and
// --bearer-token-env VAR (Authorization: Bearer $VAR). Every command that
// talks to a server over HTTP takes them (call, load, demo --server; the
// commands to come use AddHeaderFlags and Header too).
//
// Their values are secrets: no error message, table, JSON result or log
// line repeats them, and a recorder in between writes Authorization,
// Proxy-Authorization and Cookie redacted (traces.AlwaysRedactedHeaders;
// name others with --redact-header).
type HeaderOptions struct {
	Headers        []string
	BearerTokenEnv string
}

// AddHeaderFlags adds --header and --bearer-token-env to f.
func AddHeaderFlags(f *pflag.FlagSet, o *HeaderOptions) {
	f.StringArrayVar(&o.Headers, "header", nil, `send this HTTP header with every request, "Name: value" (repeatable; values are never printed)`)
	f.StringVar(&o.BearerTokenEnv, "bearer-token-env", "", "send Authorization: Bearer with the token in this environment variable (kept off the command line)")
}

// Set reports whether any header flag was given.
func (o *HeaderOptions) Set() bool { return len(o.Headers) > 0 || o.BearerTokenEnv != "" }

// Header returns the headers the flags name (nil for none). A malformed
// header, an empty or unset token variable, or two Authorization headers
// are usage errors; the messages name the flag and the header, never a
// value.
func (o *HeaderOptions) Header(st *State) (http.Header, error) {
	if !o.Set() {
		return nil, nil
	}
	h := http.Header{}
	for i, raw := range o.Headers {
		name, value, ok := strings.Cut(raw, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "":
			return nil, usagef(`--header #%d: want "Name: value"`, i+1)
		case !validHeaderName(name):
			return nil, usagef("--header #%d: %q is not a valid header name", i+1, name)
		case !validHeaderValue(value):
			return nil, usagef("--header %s: the value has characters a header cannot carry", name)
		}
		h.Add(name, value)
	}
	if v := o.BearerTokenEnv; v != "" {
		token := strings.TrimSpace(st.Getenv(v))
		switch {
		case token == "":
			return nil, usagef("--bearer-token-env %s: the variable is empty or unset", v)
		case !validHeaderValue(token):
			return nil, usagef("--bearer-token-env %s: the token has characters a header cannot carry", v)
		case h.Get("Authorization") != "":
			return nil, usagef("give --bearer-token-env or --header 'Authorization: ...', not both")
		}
		h.Set("Authorization", "Bearer "+token)
	}
	return h, nil
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s can be sent as a header value: no
// control characters but tab.
func validHeaderValue(s string) bool {
	for _, c := range []byte(s) {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
