package check

// Side is what a rule judges.
type Side string

// Sides.
const (
	Server    Side = "server"
	Client    Side = "client"
	Transport Side = "transport"
)

// Rule is one entry of the rule catalog. IDs are stable: they are never
// renamed, and new rules get new IDs.
type Rule struct {
	ID string `json:"id"`
	// Summary is the rule in one sentence.
	Summary string `json:"summary"`
	// Spec is where the rule's text is: the file under shared/spec and
	// the section.
	Spec string `json:"spec"`
	Side Side   `json:"side"`
	// Needs says what a trace must show for the rule to apply; a rule
	// whose needs were not met is SKIP with this reason.
	Needs string `json:"needs"`
}

const (
	specCore = "mcp-2025-11-25-transports-progress-tasks.md"
	spec1905 = "sep-1905-task-result-streaming.md"
	spec2679 = "sep-2679-task-partial-notifications.md"
)

// Catalog is every rule, in the order of DESIGN.md's catalog.
var Catalog = []Rule{
	{"TASK-STATUS-TRANSITION", "only legal status transitions; terminal is final; tasks begin working", specCore + ", Tasks › Behavior Requirements › Task Status Lifecycle", Server, "a task whose status was seen"},
	{"TASK-NOT-FOUND", "an unknown or expired taskId in tasks/get, tasks/result or tasks/cancel is answered -32602", specCore + ", Tasks › Error Handling › Protocol Errors", Server, "a tasks/* request for a task id the server never gave out, in a session the trace saw begin"},
	{"TASK-CANCEL-TERMINAL", "cancelling a task already terminal is answered -32602; a cancelled task stays cancelled", specCore + ", Tasks › Cancelling Tasks; Behavior Requirements › Task Cancellation", Server, "a tasks/cancel sent after the task was seen terminal"},
	{"TASK-FIELDS", "a Task carries taskId, status, createdAt and lastUpdatedAt (ISO 8601) and ttl", specCore + ", Tasks › Data Types › Task", Server, "a Task object from the server"},
	{"TASK-RESULT", "tasks/result of a terminal task returns the underlying result with related-task meta, the same every time", specCore + ", Tasks › Retrieving Task Results; Behavior Requirements › Result Retrieval; Data Types › Related Task Metadata", Server, "a tasks/result answered with a result"},
	{"TASK-SURVIVES-REQUEST", "a task is not cancelled because the request or stream that created it ended", specCore + ", Tasks › Behavior Requirements › Task Status Lifecycle; Transports › Streamable HTTP › Sending Messages to the Server", Server, "a task whose creating stream ended before the task did"},
	{"TASK-ISOLATION", "a task of one session is invisible to another session", specCore + ", Tasks › Security Considerations › Task Isolation and Access Control", Server, "a request in one session naming a task of another"},
	{"TASK-ID-ENTROPY", "task ids are unguessable: not sequential, enough random characters", specCore + ", Tasks › Behavior Requirements › Task ID Requirements; Security Considerations", Server, "two task ids or more"},
	{"S1905-MODE-SELECT", "the response mode is one the client listed and the server declares, the first of immediate > streaming > task that both support, or task with the fallback warning", spec1905 + ", Capability Negotiation; Task Result Transmission", Server, "a tools/call with responseModes"},
	{"S1905-SEQNR", "seqNr is positive, starts at 1, strictly increases and never repeats across initial response, SSE and tasks/result", spec1905 + ", Task Result Transmission › Case 3: Responding with Streaming Results", Server, "segments (partial-content) from the server"},
	{"S1905-COMPLETE", "status stays working until isComplete: true, then completed; a failure ends with isError and isComplete true and status failed", spec1905 + ", Task Result Transmission › Case 3: Responding with Streaming Results", Server, "a streamed call that completed"},
	{"S1905-RESUME", "tasks/result with lastSeqNr returns the segments after it; at or past the end an empty list with the right isComplete", spec1905 + ", Case 3 › Resuming Streaming", Server, "a tasks/result with lastSeqNr"},
	{"S1905-LASTSEQNR-INVALID", "lastSeqNr <= 0 or not a number is answered -32602", spec1905 + ", Case 3 › Resuming Streaming", Server, "a tasks/result with an invalid lastSeqNr"},
	{"S1905-MERGE", "tasks/result without lastSeqNr equals the merged segments, sorted, seqNr removed", spec1905 + ", Relationship to Existing Tasks Specification", Server, "a tasks/result of a task whose segments were seen"},
	{"S1905-IMMEDIATE", "an immediate result uses content; its task, if any, is completed; tasks/result returns the same", spec1905 + ", Task Result Transmission › Case 1: Responding with Immediate Full Result", Server, "an immediate answer to a tools/call"},
	{"S2679-SEQ", "seq starts at 0 and steps by exactly 1 per task", spec2679 + ", 1.2. Parameters; 1.3. Behavioral Requirements", Server, "partial notifications"},
	{"S2679-AFTER-TERMINAL", "no partial notification after the task's terminal status on the same stream", spec2679 + ", 1.3. Behavioral Requirements; 4. Interaction with Existing Task Lifecycle", Server, "partial notifications and a terminal status on one stream"},
	{"S2679-CONTENT", "a partial notification's content is a non-empty array", spec2679 + ", 1.2. Parameters", Server, "partial notifications"},
	{"S2679-NEGOTIATION", "no partial notifications to a client that did not declare tasks.streaming.partial", spec2679 + ", 2.3. Negotiation Rules", Server, "a session whose initialize the trace saw"},
	{"HTTP-EVENT-ID-UNIQUE", "SSE event ids are unique across all streams of a session", specCore + ", Transports › Streamable HTTP › Resumability and Redelivery", Transport, "SSE events with ids"},
	{"HTTP-RESUME-SAME-STREAM", "a replay after Last-Event-ID carries only messages of the disconnected stream", specCore + ", Transports › Streamable HTTP › Resumability and Redelivery", Transport, "a GET with Last-Event-ID naming a seen event"},
	{"HTTP-RESUME-COMPLETE", "a replay after Last-Event-ID carries every event the stream was seen to send after that id", specCore + ", Transports › Streamable HTTP › Resumability and Redelivery", Transport, "a POST stream cut before its response, then resumed"},
	{"HTTP-NO-BROADCAST", "each message is sent on one stream only", specCore + ", Transports › Streamable HTTP › Multiple Connections", Transport, "messages on two streams or more"},
	{"HTTP-ORIGIN", "a request with a foreign Origin is answered 403", specCore + ", Transports › Streamable HTTP › Security Warning", Transport, "a request whose Origin names another host"},
	{"HTTP-SESSION", "a request without the session id gets 400, one for a terminated session 404, notifications and responses alone 202", specCore + ", Transports › Streamable HTTP › Session Management; Sending Messages to the Server", Transport, "a server that gave out a session id"},
	{"CLIENT-DEDUP", "a client delivers each segment once, in order, whatever the duplicates on the wire", spec1905 + ", Client Implementation Guide › Handling Streaming Results", Client, "the client's delivered output (tasksim check --client-cmd)"},
	{"CLIENT-RESUME", "after a lost stream the client resumes (Last-Event-ID, or lastSeqNr = the highest seqNr it received) and loses nothing", specCore + ", Transports › Streamable HTTP › Resumability and Redelivery; " + spec1905 + ", Case 3 › Resuming Streaming", Client, "a stream cut before its response"},
	{"CLIENT-POLL-INTERVAL", "a polling client waits pollInterval between tasks/get of a task, and an SSE retry before reconnecting", specCore + ", Tasks › Getting Tasks; Transports › Streamable HTTP › Resumability and Redelivery", Client, "two tasks/get of one task, or a reconnect after a retry field"},
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Catalog {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
