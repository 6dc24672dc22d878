package plant

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/server"
)

// Bug is a known bug by name, with the rule that catches it and how it is
// planted in the reference implementation.
type Bug struct {
	// Name is what tasksim serve --bug and tasksim sim --bug take.
	Name string
	// Rule is the catalog rule the bug breaks.
	Rule string
	// What says in a line what the buggy peer does.
	What string
	Plant
}

// Plant says how a bug is planted: each field set wraps one layer of the
// reference implementation from outside; the others are nil (or zero).
type Plant struct {
	// Server sets a seam of the reference server's options (its task id
	// source, its task scope).
	Server func(*server.Options)
	// Endpoint decorates the reference server, whatever the transport.
	Endpoint func(mcp.Endpoint) mcp.Endpoint
	// HTTPEndpoint decorates the reference server as the Streamable HTTP
	// transport serves it; over stdio it is served as it is.
	HTTPEndpoint func(mcp.Endpoint) mcp.Endpoint
	// Handler decorates the Streamable HTTP transport's handler.
	Handler func(http.Handler) http.Handler
	// Client plants the bug in the reference client.
	Client ClientFlaws
}

// OnClient reports whether the bug is the client's.
func (p Plant) OnClient() bool { return p.Client != ClientFlaws{} }

// HTTPOnly reports whether the bug lives in the Streamable HTTP transport:
// over stdio it has nothing to break.
func (p Plant) HTTPOnly() bool { return p.HTTPEndpoint != nil || p.Handler != nil }

// ServerOptions returns a copy of o (nil: every default) with the bug's
// seam set.
func (p Plant) ServerOptions(o *server.Options) *server.Options {
	var c server.Options
	if o != nil {
		c = *o
	}
	if p.Server != nil {
		p.Server(&c)
	}
	return &c
}

// Stdio wraps a server as the stdio transport is to serve it. A server's
// stateless era stays served, unplanted (keepStateless).
func (p Plant) Stdio(ep mcp.Endpoint) mcp.Endpoint {
	if p.Endpoint != nil {
		ep = keepStateless(ep, p.Endpoint(ep))
	}
	return ep
}

// HTTP wraps a server as the Streamable HTTP transport is to serve it. A
// server's stateless era stays served, unplanted (keepStateless).
func (p Plant) HTTP(ep mcp.Endpoint) mcp.Endpoint {
	ep = p.Stdio(ep)
	if p.HTTPEndpoint != nil {
		ep = keepStateless(ep, p.HTTPEndpoint(ep))
	}
	return ep
}

// WrapHandler wraps the Streamable HTTP transport's handler.
func (p Plant) WrapHandler(h http.Handler) http.Handler {
	if p.Handler != nil {
		h = p.Handler(h)
	}
	return h
}

// RefServer returns a copy of o (nil: every default) that starts a
// reference server with the bug planted, over the decorators o already
// has.
func (p Plant) RefServer(o *refserver.Options) *refserver.Options {
	var c refserver.Options
	if o != nil {
		c = *o
	}
	c.Server = p.ServerOptions(c.Server)
	if ep := c.Endpoint; ep != nil {
		c.Endpoint = func(srv mcp.Endpoint) mcp.Endpoint { return p.HTTP(ep(srv)) }
	} else {
		c.Endpoint = p.HTTP
	}
	if h := c.Handler; h != nil {
		c.Handler = func(inner http.Handler) http.Handler { return p.WrapHandler(h(inner)) }
	} else {
		c.Handler = p.WrapHandler
	}
	return &c
}

// Bugs returns every known bug of the reference server, its Streamable
// HTTP transport and its client, by name.
func Bugs() []Bug {
	return []Bug{
		{Name: "seqnr-from-zero", Rule: "S1905-SEQNR", What: "numbers SEP-1905 segments from 0", Plant: Plant{Endpoint: SeqNrFromZero}},
		{Name: "seq-from-one", Rule: "S2679-SEQ", What: "numbers SEP-2679 partials from 1", Plant: Plant{Endpoint: SeqFromOne}},
		{Name: "sequential-ids", Rule: "TASK-ID-ENTROPY", What: "gives out task ids task-1, task-2, ...", Plant: Plant{Server: SequentialIDs}},
		{Name: "cancel-terminal", Rule: "TASK-CANCEL-TERMINAL", What: "accepts tasks/cancel of a terminal task", Plant: Plant{Endpoint: CancelTerminal}},
		{Name: "reopen-terminal", Rule: "TASK-STATUS-TRANSITION", What: "reports a completed task as working in tasks/get", Plant: Plant{Endpoint: ReopenTerminal}},
		{Name: "not-found-internal", Rule: "TASK-NOT-FOUND", What: "answers an unknown task id -32603, not -32602", Plant: Plant{Endpoint: NotFoundInternal}},
		{Name: "no-created-at", Rule: "TASK-FIELDS", What: "leaves createdAt out of every task", Plant: Plant{Endpoint: NoCreatedAt}},
		{Name: "no-related-task", Rule: "TASK-RESULT", What: "leaves the related-task meta out of tasks/result", Plant: Plant{Endpoint: NoRelatedTask}},
		{Name: "shared-tasks", Rule: "TASK-ISOLATION", What: "lets any session reach any task", Plant: Plant{Server: SharedTasks}},
		{Name: "lastseqnr-zero", Rule: "S1905-LASTSEQNR-INVALID", What: "accepts tasks/result with lastSeqNr 0", Plant: Plant{Endpoint: LastSeqNrZero}},
		{Name: "resume-off-by-one", Rule: "S1905-RESUME", What: "resumes after lastSeqNr k from segment k, not k+1", Plant: Plant{Endpoint: ResumeOffByOne}},
		{Name: "reversed-merge", Rule: "S1905-MERGE", What: "merges a task's segments last first", Plant: Plant{Endpoint: ReversedMerge}},
		{Name: "immediate-working", Rule: "S1905-IMMEDIATE", What: "answers an immediate call with its task still working", Plant: Plant{Endpoint: ImmediateWorking}},
		{Name: "failed-without-error", Rule: "S1905-COMPLETE", What: "ends a failed stream without isError", Plant: Plant{Endpoint: FailedWithoutError}},
		{Name: "partials-unasked", Rule: "S2679-NEGOTIATION", What: "sends partial notifications to clients that did not ask", Plant: Plant{Endpoint: PartialsUnasked}},
		{Name: "empty-partial", Rule: "S2679-CONTENT", What: "sends each task's first partial with empty content", Plant: Plant{Endpoint: EmptyPartial}},
		{Name: "partial-after-terminal", Rule: "S2679-AFTER-TERMINAL", What: "sends a partial after the terminal status", Plant: Plant{Endpoint: PartialAfterTerminal}},
		{Name: "ignore-modes", Rule: "S1905-MODE-SELECT", What: "answers every task-augmented call in task mode, no fallback warning", Plant: Plant{Endpoint: IgnoreModes}},
		{Name: "shared-event-ids", Rule: "HTTP-EVENT-ID-UNIQUE", What: "numbers the events of every POST stream as stream 1's", Plant: Plant{Handler: SharedEventIDs}},
		{Name: "replay-other-streams", Rule: "HTTP-RESUME-SAME-STREAM", What: "replays other streams' events after Last-Event-ID", Plant: Plant{Handler: ReplayOtherStreams}},
		{Name: "resume-skips-one", Rule: "HTTP-RESUME-COMPLETE", What: "resumes after Last-Event-ID one event too far", Plant: Plant{Handler: ResumeSkipsOne}},
		{Name: "missing-session-404", Rule: "HTTP-SESSION-MISSING", What: "answers a request without a session id 404, not 400", Plant: Plant{Handler: MissingSession404}},
		{Name: "cancel-on-disconnect", Rule: "TASK-SURVIVES-REQUEST", What: "cancels a task when its POST stream's connection ends", Plant: Plant{Handler: CancelOnDisconnect}},
		{Name: "broadcast", Rule: "HTTP-NO-BROADCAST", What: "sends standalone-stream messages on every open POST stream too", Plant: Plant{HTTPEndpoint: Broadcast}},
		{Name: "client-no-dedup", Rule: "CLIENT-DEDUP", What: "the client keeps a segment it receives twice", Plant: Plant{Client: ClientFlaws{NoDedup: true}}},
		{Name: "client-no-resume", Rule: "CLIENT-RESUME", What: "the client does not resume a cut stream", Plant: Plant{Client: ClientFlaws{NoResume: true}}},
		{Name: "client-ignore-poll-interval", Rule: "CLIENT-TASKS-GET-INTERVAL", What: "the client polls tasks/get faster than pollInterval", Plant: Plant{Client: ClientFlaws{IgnorePollInterval: true}}},
	}
}

// Names returns the names of Bugs, in order.
func Names() []string {
	all := Bugs()
	names := make([]string, len(all))
	for i, b := range all {
		names[i] = b.Name
	}
	return names
}

// Named returns the bug called name; the error lists the names there are.
func Named(name string) (Bug, error) {
	all := Bugs()
	i := slices.IndexFunc(all, func(b Bug) bool { return b.Name == name })
	if i < 0 {
		return Bug{}, fmt.Errorf("no such planted bug %q (%s)", name, strings.Join(Names(), ", "))
	}
	return all[i], nil
}

// MustNamed is Named for names known to exist; it panics on another.
func MustNamed(name string) Bug {
	b, err := Named(name)
	if err != nil {
		panic(err)
	}
	return b
}
