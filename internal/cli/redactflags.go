package cli

import (
	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/traces"
)

// RedactFlags are the redaction flags, named the same on every command
// that writes a trace or a copy of one (record, trace redact, and proxy
// with --record): --redact-header, --redact-json, --redact-regexp,
// --redact-query. Authorization, Proxy-Authorization, Cookie and
// Set-Cookie are always redacted (traces.AlwaysRedactedHeaders), and so
// are the query parameters token, access_token, key, ...
// (traces.AlwaysRedactedQuery) in request URLs and in --upstream.
type RedactFlags struct {
	Headers   []string
	JSONPaths []string
	Patterns  []string
	Query     []string
}

// AddRedactFlags adds the redaction flags to f.
func AddRedactFlags(f *pflag.FlagSet, o *RedactFlags) {
	f.StringArrayVar(&o.Headers, "redact-header", nil, "also redact this HTTP header's values (repeatable; Authorization, Proxy-Authorization, Cookie, Set-Cookie always are)")
	f.StringArrayVar(&o.JSONPaths, "redact-json", nil, "redact the JSON values at this path, e.g. params.arguments.apiKey (repeatable)")
	f.StringArrayVar(&o.Patterns, "redact-regexp", nil, "redact text matching this regular expression, or its first group (repeatable)")
	f.StringArrayVar(&o.Query, "redact-query", nil, "also redact this URL query parameter's value, in request URLs and in --upstream (repeatable; token, access_token, key and more always are)")
}

// Redactor compiles the flags; a bad path or pattern is a usage error.
func (o *RedactFlags) Redactor() (*traces.Redactor, error) {
	red, err := traces.NewRedactor(traces.RedactOptions{Headers: o.Headers, JSONPaths: o.JSONPaths, Patterns: o.Patterns, Query: o.Query})
	if err != nil {
		return nil, usagef("redaction: %v", err)
	}
	return red, nil
}
