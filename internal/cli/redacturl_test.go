package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"http://127.0.0.1:7070/mcp", "http://127.0.0.1:7070/mcp"},
		{"http://alice:PASS@host/mcp?token=T", "http://redacted@host/mcp?token=redacted"},
		{"https://TOKEN@host/mcp", "https://redacted@host/mcp"},
		{"http://host/mcp?a=1&Access_Token=x%20y&sig=s&b=2", "http://host/mcp?a=1&Access_Token=redacted&sig=redacted&b=2"},
		{"http://host/mcp?session=s1", "http://host/mcp?session=s1"},
		{"http://host/mcp?tenant=acme", "http://host/mcp?tenant=redacted"}, // configured below
		{"http://a b@host:x/", "redacted"},
	}
	for _, tc := range cases {
		if got := redactURL(tc.in, []string{"tenant"}); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Credentials in --upstream stay out of the trace header (labels and
// command line) and the startup log (Hardening item 13).
func TestRecordRedactsUpstreamCredentials(t *testing.T) {
	upstream := httptest.NewServer(http.NotFoundHandler())
	defer upstream.Close()
	const pass, user, tok, custom = "pA55-w0rd-9", "alice-user", "tok-7f3e2d", "tenant-secret-42"
	secretURL := strings.Replace(upstream.URL, "http://", "http://"+user+":"+pass+"@", 1) + "/mcp?token=" + tok + "&tenant=" + custom
	out := filepath.Join(t.TempDir(), "run.trace")
	// A context already cancelled: record writes the header, logs, and
	// stops at once, with no waiting.
	ctx, stop := context.WithCancel(context.Background())
	stop()
	var stderr syncBuffer
	st := &State{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }, Context: ctx,
		Args: []string{"record", "--upstream", secretURL, "--listen", "127.0.0.1:0", "-o", out, "--redact-query", "tenant"},
	}
	if code := Main(st); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !recordingURL.MatchString(stderr.String()) {
		t.Fatalf("no startup log line: %s", stderr.String())
	}
	h, _ := readTraceFile(t, out)
	header := strings.Join(h.Command, " ")
	for _, l := range h.Labels {
		header += " " + l.Key + "=" + l.Value
	}
	for _, secret := range []string{pass, user, tok, custom} {
		if strings.Contains(header, secret) {
			t.Errorf("trace header holds %q: %s", secret, header)
		}
		if strings.Contains(stderr.String(), secret) {
			t.Errorf("log holds %q: %s", secret, stderr.String())
		}
	}
	if !strings.Contains(header, "upstream=http://redacted@127.0.0.1:") || !strings.Contains(header, "token=redacted&tenant=redacted") {
		t.Errorf("header %s: want the upstream with its secrets redacted", header)
	}
}
