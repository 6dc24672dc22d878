package cli

import (
	"net/url"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// redactedWord replaces a secret in a URL. It is a plain word so that the
// URL still parses (HAR export reads the upstream label back).
const redactedWord = "redacted"

// redactURL returns raw with its userinfo (user and password) and the
// values of its query parameters named in traces.AlwaysRedactedQuery() or
// in more (case-insensitive) replaced by "redacted": what the trace
// header and the log say of an --upstream URL. A URL that does not parse
// is returned whole redacted: it may hold anything.
func redactURL(raw string, more []string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactedWord
	}
	if u.User != nil {
		u.User = url.User(redactedWord)
	}
	names := append(traces.AlwaysRedactedQuery(), more...)
	u.RawQuery = traces.RedactQuery(u.RawQuery, names, func(string) string { return redactedWord })
	return u.String()
}

// redactArgs returns args with every occurrence of secretURL, alone or
// after "--upstream=", replaced by safeURL.
func redactArgs(args []string, secretURL, safeURL string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, secretURL, safeURL)
	}
	return out
}
