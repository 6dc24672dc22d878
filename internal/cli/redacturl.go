package cli

import (
	"net/url"
	"slices"
	"strings"
)

// DefaultRedactQuery are the query parameters whose values record keeps
// out of the trace header and the log when they are in --upstream;
// --redact-query adds more.
var DefaultRedactQuery = []string{"token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key",
	"password", "passwd", "secret", "client_secret", "sig", "signature", "auth", "code"}

// redactedWord replaces a secret in a URL. It is a plain word so that the
// URL still parses (HAR export reads the upstream label back).
const redactedWord = "redacted"

// redactURL returns raw with its userinfo (user and password) and the
// values of the query parameters named in names (case-insensitive)
// replaced by "redacted". A URL that does not parse is returned whole
// redacted: it may hold anything.
func redactURL(raw string, names []string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactedWord
	}
	if u.User != nil {
		u.User = url.User(redactedWord)
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			k, _, hasValue := strings.Cut(p, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if hasValue && slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
				parts[i] = k + "=" + redactedWord
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
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
