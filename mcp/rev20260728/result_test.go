package rev20260728_test

import (
	"encoding/json"
	"errors"
	"testing"

	rev "github.com/tasksim/tasksim/mcp/rev20260728"
)

func TestResultTypeOf(t *testing.T) {
	const task rev.ResultType = "task"
	for _, tc := range []struct {
		name, result string
		extensions   []rev.ResultType
		want         rev.ResultType
		unknown      bool // the error matches ErrUnknownResultType
		bad          bool // some other error
	}{
		{name: "complete", result: `{"resultType":"complete"}`, want: rev.ResultComplete},
		{name: "input_required", result: `{"resultType":"input_required","requestState":"x"}`, want: rev.ResultInputRequired},
		{name: "absent is complete", result: `{"content":[]}`, want: rev.ResultComplete},
		{name: "an extension's value, negotiated", result: `{"resultType":"task"}`, extensions: []rev.ResultType{task}, want: task},
		{name: "an extension's value, not negotiated", result: `{"resultType":"task"}`, unknown: true},
		{name: "unknown", result: `{"resultType":"partial"}`, extensions: []rev.ResultType{task}, unknown: true},
		{name: "case matters", result: `{"resultType":"Complete"}`, unknown: true},
		{name: "empty string", result: `{"resultType":""}`, unknown: true},
		{name: "null", result: `{"resultType":null}`, unknown: true},
		{name: "a number", result: `{"resultType":1}`, bad: true},
		{name: "not an object", result: `[]`, bad: true},
		{name: "nothing", result: ``, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rev.ResultTypeOf(json.RawMessage(tc.result), tc.extensions...)
			switch {
			case tc.unknown:
				if !errors.Is(err, rev.ErrUnknownResultType) {
					t.Fatalf("ResultTypeOf = %q, %v; want ErrUnknownResultType", got, err)
				}
			case tc.bad:
				if err == nil || errors.Is(err, rev.ErrUnknownResultType) {
					t.Fatalf("ResultTypeOf = %q, %v; want a shape error", got, err)
				}
			default:
				if err != nil || got != tc.want {
					t.Fatalf("ResultTypeOf = %q, %v; want %q", got, err, tc.want)
				}
			}
		})
	}
}

func TestDiscoverResultValidate(t *testing.T) {
	good := func() rev.DiscoverResult {
		return rev.DiscoverResult{ResultType: rev.ResultComplete, SupportedVersions: []string{rev.ProtocolVersion}, TTLMs: 0, CacheScope: rev.CacheScopePublic}
	}
	for _, tc := range []struct {
		name  string
		edit  func(*rev.DiscoverResult)
		valid bool
	}{
		{"good", func(*rev.DiscoverResult) {}, true},
		{"private", func(r *rev.DiscoverResult) { r.CacheScope = rev.CacheScopePrivate }, true},
		{"no resultType", func(r *rev.DiscoverResult) { r.ResultType = "" }, false},
		{"no versions", func(r *rev.DiscoverResult) { r.SupportedVersions = nil }, false},
		{"negative ttl", func(r *rev.DiscoverResult) { r.TTLMs = -1 }, false},
		{"no cache scope", func(r *rev.DiscoverResult) { r.CacheScope = "" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.edit(&r)
			if err := r.Validate(); (err == nil) != tc.valid {
				t.Fatalf("Validate = %v; want valid=%v", err, tc.valid)
			}
		})
	}
}

func TestIsRemovedMethod(t *testing.T) {
	for m, want := range map[string]bool{
		"initialize": true, "ping": true, "logging/setLevel": true, "resources/subscribe": true,
		"notifications/roots/list_changed": true, "notifications/initialized": true,
		"tools/call": false, "tools/list": false, "server/discover": false, "subscriptions/listen": false,
		"notifications/cancelled": false,
	} {
		if got := rev.IsRemovedMethod(m); got != want {
			t.Errorf("IsRemovedMethod(%q) = %v", m, got)
		}
	}
}

func TestSubscriptionFilterWants(t *testing.T) {
	f := rev.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///a"}}
	for _, tc := range []struct {
		method, uri string
		want        bool
	}{
		{rev.NotificationToolsListChanged, "", true},
		{rev.NotificationPromptsListChanged, "", false},
		{rev.NotificationResourcesListChanged, "", false},
		{rev.NotificationResourcesUpdated, "file:///a", true},
		{rev.NotificationResourcesUpdated, "file:///b", false},
		{"notifications/tasks", "", false},
		{"notifications/progress", "", false},
	} {
		if got := f.Wants(tc.method, tc.uri); got != tc.want {
			t.Errorf("Wants(%s, %q) = %v", tc.method, tc.uri, got)
		}
	}
}
