package load

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/rev20260728/tasks"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// The 2026-07-28 run (Config.Revision): no initialize and no session.
// Each mode gets Config.Sessions stateless connections (HTTP clients
// sharing the target's keep-alive pool), used round-robin like sessions;
// every task is one tools/call the server answers with a task (the
// reference server's slow_text runs as one under its default policy),
// followed by polling tasks/get (poll:P overriding pollIntervalMs,
// poll:server honouring it) or by push (listen: subscriptions/listen with
// the task's id, tasks/get only as the fallback).
//
// The metrics keep their definitions: latencies from the intended start
// to the complete result in hand (client.StatelessResult.ResultAt: the
// tasks/get answer or the notifications/tasks that carried it), discovery
// from the server's completion time (the inlined result's
// dev.tasksim/completed-at, else the task's lastUpdatedAt) to that same
// moment, requests per task counted by the call (one POST each).

// statelessOpener opens 2026-07-28 connections for m; the check asks
// the target to list 2026-07-28 in server/discover and offer the tool.
func (r *runner) statelessOpener(m *modeRun) opener {
	c := client.New(&client.Options{Name: "tasksim-load", Version: r.opts.Version})
	return func(ctx context.Context, check bool) (wireConn, error) {
		s, err := c.ConnectStateless(ctx, &streamhttp.ClientTransport{URL: m.target.URL, HTTPClient: m.target.http,
			Header: r.opts.Header, Revision: mcp.Revision20260728})
		if err == nil && check {
			err = checkStatelessTarget(ctx, s, r.cfg.Tool)
		}
		if err != nil {
			if s != nil {
				s.Close()
			}
			return nil, err
		}
		m.statelessConns = append(m.statelessConns, s)
		return s, nil
	}
}

// checkStatelessTarget checks that the server speaks 2026-07-28 and
// offers the tool.
func checkStatelessTarget(ctx context.Context, s *client.Stateless, tool string) error {
	d, err := s.Discover(ctx)
	if err != nil {
		return fmt.Errorf("server/discover: %w (the server does not speak %s?)", err, mcp.Revision20260728)
	}
	if !client.SupportsRevision(d) {
		return fmt.Errorf("it does not list %s in server/discover (it lists %v)", mcp.Revision20260728, d.SupportedVersions)
	}
	tools, err := s.ListTools(ctx)
	if err != nil {
		return err
	}
	return hasTool(tools, tool)
}

// callStateless runs task k of mode m in 2026-07-28 and measures it.
func (r *runner) callStateless(ctx context.Context, m *modeRun, k int64, intended time.Time, tool string, args []byte) sample {
	tctx, cancel := context.WithTimeout(ctx, time.Duration(r.cfg.Timeout))
	res, err := m.statelessConns[k%int64(len(m.statelessConns))].CallTool(tctx, client.StatelessCallOptions{
		Name:         tool,
		Args:         json.RawMessage(args),
		PollInterval: m.spec.PollInterval,
		Listen:       m.spec.Kind == KindListen,
	})
	timedOut := tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
	cancel()
	return measureStateless(res, err, intended, timedOut, ctx.Err() != nil)
}

// measureStateless is measure for a 2026-07-28 call. Neither mode
// receives content before the result, so the first content is the result.
// It also keeps each tasks/get's round trip (request written, answer
// read) from the call's timeline, the yardstick of a push's discovery.
func measureStateless(res *client.StatelessResult, err error, intended time.Time, timedOut, interrupted bool) sample {
	var s sample
	if res == nil {
		s.errKind = errorKind(nil, err, timedOut, interrupted)
		s.errMsg = errMessage(err)
		return s
	}
	s.answer = string(res.Answer)
	s.listenFallback = res.ListenFallback != ""
	if res.Task != nil && res.Task.PollIntervalMs != nil {
		s.serverPoll = time.Duration(*res.Task.PollIntervalMs) * time.Millisecond
	}
	s.getRTTs = getRoundTrips(res.Timeline)
	if err != nil || !res.Complete || res.IsError {
		s.errKind = errorKind(nil, err, timedOut, interrupted)
		if err == nil && res.Complete {
			s.errKind = ErrKindToolError
		}
		s.errMsg = errMessage(err)
		return s
	}
	s.ok = true
	s.ttr = res.ResultAt.Sub(intended)
	s.ttfp = s.ttr
	if !res.CompletedAt.IsZero() {
		s.hasDiscovery = true
		s.discoveryUpdated = res.CompletedAtSource == client.CompletedAtLastUpdated
		s.discovery = res.ResultAt.Sub(res.CompletedAt)
	}
	s.requests = int64(res.Requests)
	return s
}

// getRoundTrips pairs each tasks/get sent with its answer, by request id.
func getRoundTrips(tl []client.Event) []time.Duration {
	var out []time.Duration
	sent := map[mcp.ID]time.Time{}
	for _, e := range tl {
		if e.Method != tasks.MethodGet {
			continue
		}
		switch e.Kind {
		case client.EventRequestSent:
			sent[e.RequestID] = e.At
		case client.EventResponse:
			if at, ok := sent[e.RequestID]; ok {
				out = append(out, e.At.Sub(at))
				delete(sent, e.RequestID)
			}
		}
	}
	return out
}
