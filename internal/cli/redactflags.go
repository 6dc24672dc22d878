package cli

import (
	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/traces"
)

// RedactFlags are the redaction flags, named the same on every command
// that writes a trace or a copy of one (record, trace redact, and proxy
// when it comes): --redact-header, --redact-json, --redact-regexp.
// Authorization, Proxy-Authorization, Cookie and Set-Cookie are always
// redacted (traces.AlwaysRedactedHeaders).
type RedactFlags struct {
	Headers   []string
	JSONPaths []string
	Patterns  []string
}

// AddRedactFlags adds the redaction flags to f.
func AddRedactFlags(f *pflag.FlagSet, o *RedactFlags) {
	f.StringArrayVar(&o.Headers, "redact-header", nil, "also redact this HTTP header's values (repeatable; Authorization, Proxy-Authorization, Cookie, Set-Cookie always are)")
	f.StringArrayVar(&o.JSONPaths, "redact-json", nil, "redact the JSON values at this path, e.g. params.arguments.apiKey (repeatable)")
	f.StringArrayVar(&o.Patterns, "redact-regexp", nil, "redact text matching this regular expression, or its first group (repeatable)")
}

// Redactor compiles the flags; a bad path or pattern is a usage error.
func (o *RedactFlags) Redactor() (*traces.Redactor, error) {
	red, err := traces.NewRedactor(traces.RedactOptions{Headers: o.Headers, JSONPaths: o.JSONPaths, Patterns: o.Patterns})
	if err != nil {
		return nil, usagef("redaction: %v", err)
	}
	return red, nil
}
