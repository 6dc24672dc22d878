package check

import (
	"slices"

	"github.com/tasksim/tasksim/traces"
)

// Side is what a rule judges.
type Side string

// Sides.
const (
	Server    Side = "server"
	Client    Side = "client"
	Transport Side = "transport"
)

// Keyword is the strength of the spec sentence a rule judges (RFC 2119,
// as the spec uses it): a MUST (or MUST NOT) broken is FAIL, a SHOULD (or
// SHOULD NOT) broken is WARN, FAIL under strict judging.
type Keyword string

// Keywords.
const (
	Must   Keyword = "MUST"
	Should Keyword = "SHOULD"
)

// Rule is one entry of the rule catalog. IDs are stable: they are never
// renamed, and new rules get new IDs. A rule judges sentences of one
// keyword: where a spec passage holds a MUST and a SHOULD, each is a rule
// of its own.
type Rule struct {
	ID string `json:"id"`
	// Keyword is MUST or SHOULD, as the spec sentence the rule judges says.
	Keyword Keyword `json:"keyword"`
	// Summary is the rule in one sentence.
	Summary string `json:"summary"`
	// Spec is where the rule's text is: the file under shared/spec and
	// the section.
	Spec string `json:"spec"`
	Side Side   `json:"side"`
	// Needs says what a trace must show for the rule to apply; a rule
	// whose needs were not met is SKIP with this reason.
	Needs string `json:"needs"`
	// Revision is the MCP revision (era) whose records the rule judges:
	// Revision20251125 or Revision20260728 (docs/trace-format.md,
	// "Revisions"). A rule never sees a record of another revision.
	Revision string `json:"revision"`
}

// The revisions rules judge, as trace records name them
// (traces.Record.Revision).
const (
	Revision20251125 = "2025-11-25"
	Revision20260728 = "2026-07-28"
)

const (
	specCore = "mcp-2025-11-25-transports-progress-tasks.md"
	spec1905 = "sep-1905-task-result-streaming.md"
	spec2679 = "sep-2679-task-partial-notifications.md"
	// specTasks is the tasks extension of 2026-07-28 (SEP-2663); specNotes
	// the team's notes on the 2026-07-28 core, which cite its sections.
	specTasks = "ext-tasks-2026-07-28.md"
	specNotes = "notes-mcp-2026-07-28.md"
)

// RuleID names a rule of the catalog in code: check's judging takes a
// RuleID, so a rule that is not in the catalog does not compile. Its
// String is the rule's ID.
type RuleID int

// The rules of the catalog, in its order.
const (
	RuleTaskStatusTransition RuleID = iota
	RuleTaskNotFound
	RuleTaskCancelTerminal
	RuleTaskFields
	RuleTaskResult
	RuleTaskSurvivesRequest
	RuleTaskIsolation
	RuleTaskIDEntropy
	RuleS1905ModeSelect
	RuleS1905FallbackWarning
	RuleS1905SeqNr
	RuleS1905Complete
	RuleS1905Resume
	RuleS1905LastSeqNrInvalid
	RuleS1905Merge
	RuleS1905Immediate
	RuleS2679Seq
	RuleS2679AfterTerminal
	RuleS2679Content
	RuleS2679Negotiation
	RuleHTTPEventIDUnique
	RuleHTTPResumeSameStream
	RuleHTTPResumeComplete
	RuleHTTPNoBroadcast
	RuleHTTPOrigin
	RuleHTTPSession
	RuleHTTPSessionMissing
	RuleClientDedup
	RuleClientResume
	RuleClientPollInterval
	RuleClientTasksGetInterval
	RuleClientComplete
	RuleS2663ResultType
	RuleS2663GetShape
	RuleS2663TerminalFinal
	RuleS2663DurableCreate
	RuleS2663NotFound
	RuleS2663RemovedMethods
	RuleS2663AckEmpty
	RuleS2663InputKeys
	RuleHTTPHeaderMismatch
	RuleHTTPStateless
	RuleS2663Capability
	RuleS2663IDEntropy
	RuleS2663ListenTasks
	RuleS2663TaskFields
	RuleClient2663PollInterval
	RuleClient2663McpName
	RuleClient2663Capability
	RuleClient2663NewID
	RuleClient2663ResultType
	RuleClient2663KeepPolling
	RuleClient2663FailedOutcome

	numRules = iota
)

// String returns the rule's ID: "TASK-FIELDS".
func (id RuleID) String() string { return catalog[id].ID }

// Catalog returns every rule, in the order of DESIGN.md's catalog: a copy,
// the caller's to change.
func Catalog() []Rule { return slices.Clone(catalog[:]) }

// catalog is every rule, by RuleID; revisions fills in each rule's
// revision.
var catalog = revisions([numRules]Rule{
	RuleTaskStatusTransition: {
		ID: "TASK-STATUS-TRANSITION", Keyword: Must, Side: Server,
		Summary: "only legal status transitions; terminal is final; tasks begin working",
		Spec:    specCore + ", Tasks › Behavior Requirements › Task Status Lifecycle",
		Needs:   "a task whose status was seen",
	},
	RuleTaskNotFound: {
		ID: "TASK-NOT-FOUND", Keyword: Must, Side: Server,
		Summary: "an unknown or expired taskId in tasks/get, tasks/result or tasks/cancel is answered -32602",
		Spec:    specCore + ", Tasks › Error Handling › Protocol Errors",
		Needs:   "a tasks/* request for a task id the server never gave out, in a session the trace saw begin",
	},
	RuleTaskCancelTerminal: {
		ID: "TASK-CANCEL-TERMINAL", Keyword: Must, Side: Server,
		Summary: "cancelling a task already terminal is answered -32602; a cancelled task stays cancelled",
		Spec:    specCore + ", Tasks › Cancelling Tasks; Behavior Requirements › Task Cancellation",
		Needs:   "a tasks/cancel sent after the task was seen terminal",
	},
	RuleTaskFields: {
		ID: "TASK-FIELDS", Keyword: Must, Side: Server,
		Summary: "a Task carries taskId, status, createdAt and lastUpdatedAt (ISO 8601) and ttl",
		Spec:    specCore + ", Tasks › Data Types › Task",
		Needs:   "a Task object from the server",
	},
	RuleTaskResult: {
		ID: "TASK-RESULT", Keyword: Must, Side: Server,
		Summary: "tasks/result of a terminal task returns the underlying result with related-task meta, the same every time",
		Spec:    specCore + ", Tasks › Retrieving Task Results; Behavior Requirements › Result Retrieval; Data Types › Related Task Metadata",
		Needs:   "a tasks/result answered with a result",
	},
	RuleTaskSurvivesRequest: {
		ID: "TASK-SURVIVES-REQUEST", Keyword: Should, Side: Server,
		Summary: "a task is not cancelled because the request or stream that created it ended",
		Spec:    specCore + ", Tasks › Behavior Requirements › Task Status Lifecycle; Transports › Streamable HTTP › Sending Messages to the Server",
		Needs:   "a task whose creating stream ended before the task did",
	},
	RuleTaskIsolation: {
		ID: "TASK-ISOLATION", Keyword: Must, Side: Server,
		Summary: "a task of one session is invisible to another session",
		Spec:    specCore + ", Tasks › Security Considerations › Task Isolation and Access Control",
		Needs:   "a request in one session naming a task of another",
	},
	RuleTaskIDEntropy: {
		ID: "TASK-ID-ENTROPY", Keyword: Must, Side: Server,
		Summary: "task ids are unguessable: not sequential, enough random characters",
		Spec:    specCore + ", Tasks › Behavior Requirements › Task ID Requirements; Security Considerations",
		Needs:   "two task ids or more",
	},
	RuleS1905ModeSelect: {
		ID: "S1905-MODE-SELECT", Keyword: Must, Side: Server,
		Summary: "the response mode is one the client listed and the server declares, the first of immediate > streaming > task that both support, or the task fallback",
		Spec:    spec1905 + ", Capability Negotiation; Task Result Transmission",
		Needs:   "a tools/call with responseModes",
	},
	RuleS1905FallbackWarning: {
		ID: "S1905-FALLBACK-WARNING", Keyword: Should, Side: Server,
		Summary: "a call answered in task mode though its responseModes did not list task carries the fallback warning",
		Spec:    spec1905 + ", Capability Negotiation",
		Needs:   "a tools/call answered in task mode that listed no task mode",
	},
	RuleS1905SeqNr: {
		ID: "S1905-SEQNR", Keyword: Must, Side: Server,
		Summary: "seqNr is positive, starts at 1, strictly increases and never repeats across initial response, SSE and tasks/result",
		Spec:    spec1905 + ", Task Result Transmission › Case 3: Responding with Streaming Results",
		Needs:   "segments (partial-content) from the server",
	},
	RuleS1905Complete: {
		ID: "S1905-COMPLETE", Keyword: Must, Side: Server,
		Summary: "status stays working until isComplete: true, then completed; a failure ends with isError and isComplete true and status failed",
		Spec:    spec1905 + ", Task Result Transmission › Case 3: Responding with Streaming Results",
		Needs:   "a streamed call that completed",
	},
	RuleS1905Resume: {
		ID: "S1905-RESUME", Keyword: Must, Side: Server,
		Summary: "tasks/result with lastSeqNr returns the segments after it; at or past the end an empty list with the right isComplete",
		Spec:    spec1905 + ", Case 3 › Resuming Streaming",
		Needs:   "a tasks/result with lastSeqNr",
	},
	RuleS1905LastSeqNrInvalid: {
		ID: "S1905-LASTSEQNR-INVALID", Keyword: Must, Side: Server,
		Summary: "lastSeqNr <= 0 or not a number is answered -32602",
		Spec:    spec1905 + ", Case 3 › Resuming Streaming",
		Needs:   "a tasks/result with an invalid lastSeqNr",
	},
	RuleS1905Merge: {
		ID: "S1905-MERGE", Keyword: Must, Side: Server,
		Summary: "tasks/result without lastSeqNr equals the merged segments, sorted, seqNr removed",
		Spec:    spec1905 + ", Relationship to Existing Tasks Specification",
		Needs:   "a tasks/result of a task whose segments were seen",
	},
	RuleS1905Immediate: {
		ID: "S1905-IMMEDIATE", Keyword: Must, Side: Server,
		Summary: "an immediate result uses content; its task, if any, is completed; tasks/result returns the same",
		Spec:    spec1905 + ", Task Result Transmission › Case 1: Responding with Immediate Full Result",
		Needs:   "an immediate answer to a tools/call",
	},
	RuleS2679Seq: {
		ID: "S2679-SEQ", Keyword: Must, Side: Server,
		Summary: "seq starts at 0 and steps by exactly 1 per task",
		Spec:    spec2679 + ", 1.2. Parameters; 1.3. Behavioral Requirements",
		Needs:   "partial notifications",
	},
	RuleS2679AfterTerminal: {
		ID: "S2679-AFTER-TERMINAL", Keyword: Must, Side: Server,
		Summary: "no partial notification after the task's terminal status on the same stream",
		Spec:    spec2679 + ", 1.3. Behavioral Requirements; 4. Interaction with Existing Task Lifecycle",
		Needs:   "partial notifications and a terminal status on one stream",
	},
	RuleS2679Content: {
		ID: "S2679-CONTENT", Keyword: Must, Side: Server,
		Summary: "a partial notification's content is a non-empty array",
		Spec:    spec2679 + ", 1.2. Parameters",
		Needs:   "partial notifications",
	},
	RuleS2679Negotiation: {
		ID: "S2679-NEGOTIATION", Keyword: Should, Side: Server,
		Summary: "no partial notifications to a client that did not declare tasks.streaming.partial",
		Spec:    spec2679 + ", 2.3. Negotiation Rules",
		Needs:   "a session whose initialize the trace saw",
	},
	RuleHTTPEventIDUnique: {
		ID: "HTTP-EVENT-ID-UNIQUE", Keyword: Must, Side: Transport,
		Summary: "SSE event ids are unique across all streams of a session",
		Spec:    specCore + ", Transports › Streamable HTTP › Resumability and Redelivery",
		Needs:   "SSE events with ids",
	},
	RuleHTTPResumeSameStream: {
		ID: "HTTP-RESUME-SAME-STREAM", Keyword: Must, Side: Transport,
		Summary: "a replay after Last-Event-ID carries only messages of the disconnected stream",
		Spec:    specCore + ", Transports › Streamable HTTP › Resumability and Redelivery",
		Needs:   "a GET with Last-Event-ID naming a seen event",
	},
	RuleHTTPResumeComplete: {
		ID: "HTTP-RESUME-COMPLETE", Keyword: Should, Side: Transport,
		Summary: "a replay after Last-Event-ID carries every event the stream was seen to send after that id",
		Spec:    specCore + ", Transports › Streamable HTTP › Resumability and Redelivery; Sending Messages to the Server",
		Needs:   "a POST stream cut before its response, then resumed",
	},
	RuleHTTPNoBroadcast: {
		ID: "HTTP-NO-BROADCAST", Keyword: Must, Side: Transport,
		Summary: "each message is sent on one stream only",
		Spec:    specCore + ", Transports › Streamable HTTP › Multiple Connections",
		Needs:   "messages on two streams or more",
	},
	RuleHTTPOrigin: {
		ID: "HTTP-ORIGIN", Keyword: Must, Side: Transport,
		Summary: "a request with a foreign Origin is answered 403",
		Spec:    specCore + ", Transports › Streamable HTTP › Security Warning",
		Needs:   "a request whose Origin names another host",
	},
	RuleHTTPSession: {
		ID: "HTTP-SESSION", Keyword: Must, Side: Transport,
		Summary: "a request of a terminated session gets 404, notifications and responses alone 202",
		Spec:    specCore + ", Transports › Streamable HTTP › Session Management; Sending Messages to the Server",
		Needs:   "a server that gave out a session id",
	},
	RuleHTTPSessionMissing: {
		ID: "HTTP-SESSION-MISSING", Keyword: Should, Side: Transport,
		Summary: "a request without the session id, other than initialize, gets 400 from a server that gave one out",
		Spec:    specCore + ", Transports › Streamable HTTP › Session Management",
		Needs:   "a request without Mcp-Session-Id to a server that gave out a session id",
	},
	RuleClientDedup: {
		ID: "CLIENT-DEDUP", Keyword: Must, Side: Client,
		Summary: "a client delivers no segment twice, whatever the duplicates on the wire",
		Spec:    spec1905 + ", Client Implementation Guide › Handling Streaming Results",
		Needs:   "the client's delivered output (tasksim check --client-cmd)",
	},
	RuleClientResume: {
		ID: "CLIENT-RESUME", Keyword: Must, Side: Client,
		Summary: "after a lost stream the client resumes (Last-Event-ID, or lastSeqNr = the highest seqNr it received) and loses nothing",
		Spec:    specCore + ", Transports › Streamable HTTP › Resumability and Redelivery; " + spec1905 + ", Case 3 › Resuming Streaming",
		Needs:   "a stream cut before its response",
	},
	RuleClientPollInterval: {
		ID: "CLIENT-POLL-INTERVAL", Keyword: Must, Side: Client,
		Summary: "a client waits the SSE retry the server set before reconnecting",
		Spec:    specCore + ", Transports › Streamable HTTP › Sending Messages to the Server; Resumability and Redelivery",
		Needs:   "a reconnect after a retry field",
	},
	RuleClientTasksGetInterval: {
		ID: "CLIENT-TASKS-GET-INTERVAL", Keyword: Should, Side: Client,
		Summary: "a polling client waits pollInterval between tasks/get of a task",
		Spec:    specCore + ", Tasks › Getting Tasks; Behavior Requirements › TTL and Resource Management",
		Needs:   "two tasks/get of one task",
	},
	RuleClientComplete: {
		ID: "CLIENT-COMPLETE", Keyword: Must, Side: Client,
		Summary: "a client that reports success delivered the whole result the server sent: every segment, once, in order",
		Spec:    spec1905 + ", Client Implementation Guide › Handling Streaming Results; Case 3 › Resuming Streaming; Relationship to Existing Tasks Specification",
		Needs:   "the client's delivered output and the scripted server's own record of the result (tasksim check --client-cmd)",
	},
	RuleS2663ResultType: {
		ID: "S2663-RESULT-TYPE", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "every result carries resultType: task on a CreateTaskResult and nowhere else, complete on tasks/get, tasks/update and tasks/cancel, input_required only with inputRequests",
		Spec:    specTasks + ", Polymorphic Results; Task Polling › Response; Task Update Requests › Response; Task Cancellation › Response; " + specNotes + ", 1.4 resultType",
		Needs:   "a result answering a 2026-07-28 request",
	},
	RuleS2663GetShape: {
		ID: "S2663-GET-SHAPE", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a DetailedTask carries what its status asks: completed its result (isError results too), failed a JSON-RPC error and no result, input_required its inputRequests",
		Spec:    specTasks + ", Task Polling › Response; Task Status; Error Handling › Task Execution Errors",
		Needs:   "a tasks/get answer or notifications/tasks in status completed, failed or input_required",
	},
	RuleS2663TerminalFinal: {
		ID: "S2663-TERMINAL-FINAL", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a terminal status is final: a tasks/get sent after the task was seen terminal, or a later notifications/tasks on the same listen stream, shows the same status with the same result or error; two terminal sightings, in any order, agree",
		Spec:    specTasks + ", Tasks › Task Status State Diagram; Error Handling › Task Execution Errors",
		Needs:   "a task seen terminal, then seen again (tasks/get sent after, the same listen stream, or terminal anywhere)",
	},
	RuleS2663DurableCreate: {
		ID: "S2663-DURABLE-CREATE", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a task is durable once its CreateTaskResult is out: the first tasks/get of it, within its ttlMs, is not answered -32602",
		Spec:    specTasks + ", Task Creation",
		Needs:   "a tasks/get of a task the trace saw created",
	},
	RuleS2663NotFound: {
		ID: "S2663-NOT-FOUND", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a tasks/get of a task id the server never gave out, answered with an error, is answered -32602",
		Spec:    specTasks + ", Error Handling › Protocol Errors",
		Needs:   "a tasks/get of a task id the trace never saw given out, answered with an error",
	},
	RuleS2663RemovedMethods: {
		ID: "S2663-REMOVED-METHODS", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "tasks/result and tasks/list, which the revision does not have, are answered -32601",
		Spec:    specTasks + ", Tasks extension note (three methods: tasks/get, tasks/update, tasks/cancel); Security Considerations (no tasks/list); " + specNotes + ", 1.3 Error codes and HTTP status",
		Needs:   "a 2026-07-28 tasks/result or tasks/list",
	},
	RuleS2663AckEmpty: {
		ID: "S2663-ACK-EMPTY", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a tasks/update or tasks/cancel that succeeds is acknowledged with an empty result: nothing but resultType and _meta",
		Spec:    specTasks + ", Task Update Requests › Response; Task Cancellation › Response",
		Needs:   "a tasks/update or tasks/cancel answered with a result",
	},
	RuleS2663InputKeys: {
		ID: "S2663-INPUT-KEYS", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "an inputRequests key names one request over the task's life: never two distinct requests, never reused after its answer was taken",
		Spec:    specTasks + ", Task Update Requests",
		Needs:   "a task seen in status input_required twice or more",
	},
	RuleHTTPHeaderMismatch: {
		ID: "HTTP-HEADER-MISMATCH", Keyword: Must, Side: Transport, Revision: Revision20260728,
		Summary: "a request whose Mcp-Method, Mcp-Name or MCP-Protocol-Version header is missing or disagrees with its body is answered HTTP 400 with -32020",
		Spec:    specNotes + ", 1.2 Required HTTP headers (2026-07-28 Streamable HTTP, Request Metadata); " + specTasks + ", Streamable HTTP: Routing Headers",
		Needs:   "a 2026-07-28 request whose routing headers disagree with its body",
	},
	RuleHTTPStateless: {
		ID: "HTTP-STATELESS", Keyword: Must, Side: Transport, Revision: Revision20260728,
		Summary: "no 2026-07-28 answer carries an Mcp-Session-Id; a GET or DELETE of the revision is answered 405",
		Spec:    specNotes + ", 1.5 SSE on POST responses; no GET stream (2026-07-28 Streamable HTTP, Earlier Streamable HTTP Revisions)",
		Needs:   "a 2026-07-28 HTTP answer",
	},
	RuleS2663Capability: {
		ID: "S2663-CAPABILITY", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a request whose capabilities do not declare the tasks extension gets no CreateTaskResult, and its tasks/get, tasks/update, tasks/cancel or listen for task ids gets -32021",
		Spec:    specTasks + ", Capability Negotiation; Error Handling › Protocol Errors; Task Status Notifications",
		Needs:   "a 2026-07-28 tools/call, tasks/* or listen for task ids whose capabilities do not declare io.modelcontextprotocol/tasks",
	},
	RuleS2663IDEntropy: {
		ID: "S2663-ID-ENTROPY", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "task ids are unguessable: not sequential, enough random characters",
		Spec:    specTasks + ", Security Considerations › Task ID unguessability",
		Needs:   "two task ids or more given out in CreateTaskResults",
	},
	RuleS2663ListenTasks: {
		ID: "S2663-LISTEN-TASKS", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "notifications/tasks come only on a subscriptions/listen stream that asked for that task id (and whose acknowledgement agreed to it); no notifications/progress or notifications/message on a listen stream",
		Spec:    specTasks + ", Task Status Notifications; " + specNotes + ", 1.7 subscriptions/listen (Subscriptions: the server MUST NOT send types the client did not request)",
		Needs:   "a notifications/tasks",
	},
	RuleS2663TaskFields: {
		ID: "S2663-TASK-FIELDS", Keyword: Must, Side: Server, Revision: Revision20260728,
		Summary: "a Task carries taskId, a known status, createdAt and lastUpdatedAt (ISO 8601) and ttlMs (an integer or null); pollIntervalMs, when present, is an integer",
		Spec:    specTasks + ", Tasks (interface Task); Task Creation",
		Needs:   "a CreateTaskResult, tasks/get answer or notifications/tasks",
	},
	// The client rules of 2026-07-28 judge a client by its clientInfo (the
	// revision has no session) and the tasks it was given (client2026.go).
	RuleClient2663PollInterval: {
		ID: "CLIENT-2663-POLL-INTERVAL", Keyword: Should, Side: Client, Revision: Revision20260728,
		Summary: "a client waits the last pollIntervalMs the server gave for a task before its next tasks/get of it (90% of it, for recording jitter)",
		Spec:    specTasks + ", Tasks (interface Task: pollIntervalMs); Task Polling",
		Needs:   "a tasks/get of a task the client was given, with a pollIntervalMs, not yet seen terminal",
	},
	RuleClient2663McpName: {
		ID: "CLIENT-2663-MCP-NAME", Keyword: Must, Side: Client, Revision: Revision20260728,
		Summary: "a tasks/get, tasks/update or tasks/cancel over HTTP carries the Mcp-Name header, equal to its taskId",
		Spec:    specTasks + ", Streamable HTTP: Routing Headers; " + specNotes + ", 1.2 Required HTTP headers",
		Needs:   "a tasks/get, tasks/update or tasks/cancel over HTTP of a task the client was given",
	},
	RuleClient2663Capability: {
		ID: "CLIENT-2663-CAPABILITY", Keyword: Must, Side: Client, Revision: Revision20260728,
		Summary: "a tasks/get, tasks/update, tasks/cancel or listen for task ids declares io.modelcontextprotocol/tasks in that request's clientCapabilities",
		Spec:    specTasks + ", Capability Negotiation; Error Handling › Protocol Errors; " + specNotes + ", 1.1 Stateless requests (no capability inferred from earlier requests)",
		Needs:   "a tasks/get, tasks/update, tasks/cancel or listen for task ids of a task the client was given",
	},
	RuleClient2663NewID: {
		ID: "CLIENT-2663-NEW-ID", Keyword: Must, Side: Client, Revision: Revision20260728,
		Summary: "a request whose stream broke before its answer is re-issued with a new id, and no request reuses the id of an outstanding request of its client",
		Spec:    specNotes + ", 1.6 Cancellation and broken streams (changelog: a broken response stream loses the request; re-issue it with a new id; ids never collide with outstanding requests)",
		Needs:   "a request of the client re-issued (the same method and params) after its stream broke before its answer",
	},
	RuleClient2663ResultType: {
		ID: "CLIENT-2663-RESULT-TYPE", Keyword: Must, Side: Client, Revision: Revision20260728,
		Summary: "a result whose resultType the client does not know is invalid: the client does not act on it (no inputResponses to its inputRequests, no tasks/* of a task id only it gave)",
		Spec:    specNotes + ", 1.4 resultType (a client MUST treat an unknown value as invalid); " + specTasks + ", Polymorphic Results",
		Needs:   "a result of a tools/call with a resultType the revision does not define",
	},
	RuleClient2663KeepPolling: {
		ID: "CLIENT-2663-KEEP-POLLING", Keyword: Should, Side: Client, Revision: Revision20260728,
		Summary: "a client follows each task it was given to a terminal status, or cancels it: none is left non-terminal without tasks/cancel at the end of the trace",
		Spec:    specTasks + ", Task Polling; Task Update Requests",
		Needs:   "a task the client was given (a CreateTaskResult answering it)",
	},
	RuleClient2663FailedOutcome: {
		ID: "CLIENT-2663-FAILED-OUTCOME", Keyword: Should, Side: Client, Revision: Revision20260728,
		Summary: "a client that saw a task failed reads its outcome: a DetailedTask failed with its error, or a tasks/get asked after it saw failed",
		Spec:    specTasks + ", Task Status (failed); Task Polling › Response; Error Handling › Task Execution Errors",
		Needs:   "a task the client was given and saw failed",
	},
})

// revisions gives every rule that names no revision 2025-11-25's: the
// rules written before the 2026-07-28 revision judge that one.
func revisions(rules [numRules]Rule) [numRules]Rule {
	for i := range rules {
		if rules[i].Revision == "" {
			rules[i].Revision = Revision20251125
		}
	}
	return rules
}

// Breach is the status of a broken rule: FAIL for a MUST; WARN for a
// SHOULD, unless strict, which makes it FAIL too.
func (r Rule) Breach(strict bool) Status {
	if r.Keyword == Should && !strict {
		return Warn
	}
	return Fail
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range catalog {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// RevisionOf returns the revision a trace header names for the records
// that name none (traces.Header.Protocol, docs/trace-format.md,
// "Revisions"), for Options.Revision: Revision20260728 when it says so,
// "" (2025-11-25, whose era holds every earlier version) otherwise.
func RevisionOf(h traces.Header) string {
	if h.Protocol == Revision20260728 {
		return Revision20260728
	}
	return ""
}
