package streamhttp

import "testing"

func TestAccepts(t *testing.T) {
	cases := []struct {
		name     string
		accept   []string
		json, es bool
	}{
		{name: "both", accept: []string{"application/json, text/event-stream"}, json: true, es: true},
		{name: "two headers", accept: []string{"application/json", "text/event-stream"}, json: true, es: true},
		{name: "case and spaces", accept: []string{" Application/JSON ;q=0.9 ,TEXT/Event-Stream"}, json: true, es: true},
		{name: "any", accept: []string{"*/*"}, json: true, es: true},
		{name: "type wildcards", accept: []string{"application/*, text/*"}, json: true, es: true},
		{name: "json only", accept: []string{"application/json"}, json: true},
		{name: "q=0 excludes", accept: []string{"application/json;q=0, text/event-stream"}, es: true},
		{name: "q=0.000 excludes", accept: []string{"*/*;q=0.000"}},
		{name: "specific wins over wildcard", accept: []string{"text/*;q=0, text/event-stream, */*;q=0"}, es: true},
		{name: "wildcard with specific exclusion", accept: []string{"*/*, application/json;q=0"}, es: true},
		{name: "other type", accept: []string{"text/html"}},
		{name: "garbage", accept: []string{"json"}},
		{name: "absent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := accepts(tc.accept, "application", "json"); got != tc.json {
				t.Errorf("application/json: %v, want %v", got, tc.json)
			}
			if got := accepts(tc.accept, "text", "event-stream"); got != tc.es {
				t.Errorf("text/event-stream: %v, want %v", got, tc.es)
			}
		})
	}
}

func TestIsJSONContentType(t *testing.T) {
	cases := []struct {
		name, ct string
		want     bool
	}{
		{name: "plain", ct: "application/json", want: true},
		{name: "case", ct: "Application/JSON", want: true},
		{name: "charset", ct: "application/json; charset=utf-8", want: true},
		{name: "quoted charset", ct: `application/json;charset="UTF-8"`, want: true},
		{name: "other parameter", ct: "application/json; foo=bar", want: true},
		{name: "latin1", ct: "application/json; charset=iso-8859-1", want: false},
		{name: "text", ct: "text/plain", want: false},
		{name: "json suffix", ct: "application/vnd.api+json", want: false},
		{name: "empty", ct: "", want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := isJSONContentType(tc.ct); got != tc.want {
				t.Errorf("isJSONContentType(%q) = %v, want %v", tc.ct, got, tc.want)
			}
		})
	}
}

func TestProtocolVersionOK(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		want   bool
	}{
		{name: "absent", want: true},
		{name: "latest", values: []string{"2025-11-25"}, want: true},
		{name: "default", values: []string{"2025-03-26"}, want: true},
		{name: "unknown", values: []string{"2026-01-01"}, want: false},
		{name: "empty", values: []string{""}, want: false},
		{name: "one bad of two", values: []string{"2025-11-25", "x"}, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := protocolVersionOK(tc.values); got != tc.want {
				t.Errorf("protocolVersionOK(%q) = %v, want %v", tc.values, got, tc.want)
			}
		})
	}
}
