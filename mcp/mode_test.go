package mcp_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/mcp"
)

func modes(ms ...mcp.ResponseMode) []mcp.ResponseMode {
	if ms == nil {
		return []mcp.ResponseMode{}
	}
	return ms
}

const (
	immediate = mcp.ModeImmediate
	streaming = mcp.ModeStreaming
	task      = mcp.ModeTask
)

// TestDecideMode has one case per rule of SEP-1905 "Capability Negotiation"
// and "Server Response Decision Process", and the SEP's test scenarios that
// the decision alone settles.
func TestDecideMode(t *testing.T) {
	all := modes(immediate, streaming, task)
	tests := []struct {
		name        string
		client      []mcp.ResponseMode
		server      []mcp.ResponseMode
		ready       bool // complete result available at request time
		incremental bool // tool known to produce results incrementally
		want        mcp.ModeDecision
	}{
		// Priority immediate > streaming > task, for every non-empty subset of
		// the client's modes, against a server supporting all three. The
		// result is ready and incremental so that step 2 changes nothing.
		{
			name: "priority: {immediate}", client: modes(immediate), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "priority: {streaming}", client: modes(streaming), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: streaming, Mode: streaming},
		},
		{
			name: "priority: {task}", client: modes(task), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "priority: {immediate, streaming}", client: modes(immediate, streaming), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "priority: {immediate, task}", client: modes(immediate, task), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "priority: {streaming, task}", client: modes(streaming, task), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: streaming, Mode: streaming},
		},
		{
			name: "priority: {immediate, streaming, task}", client: modes(immediate, streaming, task), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "priority does not follow the client's order", client: modes(task, streaming, immediate), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "priority does not follow the server's order", client: modes(task, streaming), server: modes(task, streaming, immediate), ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: streaming, Mode: streaming},
		},

		// The server's support matters.
		{
			name: "server without streaming picks the next common mode", client: modes(streaming, task), server: modes(immediate, task), ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "server without immediate", client: all, server: modes(streaming, task), ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: streaming, Mode: streaming},
		},

		// Never outside the client's list.
		{
			name: "never outside the client's list: ready result stays task", client: modes(task), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "never outside the client's list: no streaming fallback the client did not offer", client: modes(immediate, task), server: all, ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: task},
		},

		// Defaults and fallback.
		{
			name: "client list absent defaults to task", client: nil, server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "client list empty defaults to task", client: modes(), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "no common mode falls back to task with a warning", client: modes(immediate), server: modes(streaming, task), ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task, Fallback: true},
		},
		{
			name: "fallback to task even when task is not in the client's list", client: modes(streaming), server: modes(immediate, task), ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task, Fallback: true},
		},
		{
			name: "server supporting no mode falls back", client: all, server: modes(), ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task, Fallback: true},
		},
		{
			name: "old server answers task without a fallback warning", client: modes(immediate, streaming), server: nil, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},

		// Unknown mode strings are ignored.
		{
			name: "unknown modes in the client's list are ignored", client: modes("video", streaming, "Immediate"), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: streaming, Mode: streaming},
		},
		{
			name: "only unknown modes: none supported, fallback", client: modes("video", "IMMEDIATE"), server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task, Fallback: true},
		},

		// Step 2: result availability.
		{
			name: "immediate with result ready answers immediately", client: all, server: all, ready: true, incremental: false,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "immediate not ready, incremental, streaming in both: streaming", client: all, server: all, ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: streaming},
		},
		{
			name: "immediate not ready, incremental, client lacks streaming: task", client: modes(immediate, task), server: all, ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: task},
		},
		{
			name: "immediate not ready, incremental, server lacks streaming: task", client: all, server: modes(immediate, task), ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: task},
		},
		{
			name: "immediate not ready, not incremental: task", client: all, server: all, ready: false, incremental: false,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: task},
		},
		{
			name: "streaming with result ready stays streaming", client: modes(streaming, task), server: all, ready: true, incremental: false,
			want: mcp.ModeDecision{Negotiated: streaming, Mode: streaming},
		},

		// SEP-1905 "Test Scenarios".
		{
			name: "scenario 1: immediate mode, complete results", client: modes(immediate), server: all, ready: true, incremental: false,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: immediate},
		},
		{
			name: "scenario 2: task mode, standard flow", client: modes(task), server: all, ready: false, incremental: false,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "scenario 2: no mode specified, standard flow", client: nil, server: all, ready: false, incremental: false,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "scenario 8: immediate fallback to task", client: modes(immediate), server: all, ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: task},
		},
		{
			name: "scenario 8: immediate fallback to streaming", client: modes(immediate, streaming), server: all, ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: immediate, Mode: streaming},
		},
		{
			name: "scenario 13: new client, old server", client: modes(streaming), server: nil, ready: false, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
		{
			name: "scenario 14: old client, new server", client: nil, server: all, ready: true, incremental: true,
			want: mcp.ModeDecision{Negotiated: task, Mode: task},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mcp.DecideMode(tt.client, tt.server, tt.ready, tt.incremental)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecideMode(%q, %q, ready=%v, incremental=%v) mismatch (-want +got):\n%s",
					tt.client, tt.server, tt.ready, tt.incremental, diff)
			}
			// Whatever the inputs, the mode is task or one the client listed.
			if got.Mode != task && !contains(tt.client, got.Mode) {
				t.Errorf("Mode %q is outside the client's list %q", got.Mode, tt.client)
			}
		})
	}
}

func contains(ms []mcp.ResponseMode, m mcp.ResponseMode) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

func TestResponseModeIsValid(t *testing.T) {
	tests := []struct {
		mode mcp.ResponseMode
		want bool
	}{
		{mode: immediate, want: true},
		{mode: streaming, want: true},
		{mode: task, want: true},
		{mode: "", want: false},
		{mode: "Task", want: false},
		{mode: "video", want: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			if got := tt.mode.IsValid(); got != tt.want {
				t.Errorf("IsValid(%q) = %v, want %v", tt.mode, got, tt.want)
			}
		})
	}
}
