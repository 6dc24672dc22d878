package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// Bugs plants known bugs in a run's reference implementation, for tests
// only: the simulator's own test (and tasksim sim --bug, a hidden flag)
// break it one bug at a time and expect the rule that names the bug to
// fail within 1,000 seeds.
type Bugs struct {
	Server server.Bugs
	HTTP   streamhttp.Bugs
	Client client.Bugs
}

// PlantedBug is one planted bug by name, with the rule it breaks.
type PlantedBug struct {
	Name string
	// Rule is the catalog rule the bug breaks.
	Rule string
	Bugs Bugs
	// ShownBy, when set, is the rule the simulation shows the bug by
	// instead, and why: "RULE: why".
	ShownBy string
	// Unreachable, when set, says why the simulation's workload cannot
	// show the bug (the check suite's scenarios do): it sends nothing
	// that would.
	Unreachable string
}

// PlantedBugs returns every planted bug of the server, its HTTP transport
// and the client, by name.
func PlantedBugs() []PlantedBug {
	return []PlantedBug{
		{Name: "seqnr-from-zero", Rule: "S1905-SEQNR", Bugs: Bugs{Server: server.Bugs{SeqNrFromZero: true}}},
		{Name: "seq-from-one", Rule: "S2679-SEQ", Bugs: Bugs{Server: server.Bugs{SeqFromOne: true}}},
		{Name: "sequential-ids", Rule: "TASK-ID-ENTROPY", Bugs: Bugs{Server: server.Bugs{SequentialIDs: true}}},
		{Name: "cancel-terminal", Rule: "TASK-CANCEL-TERMINAL", Bugs: Bugs{Server: server.Bugs{CancelTerminal: true}}},
		{Name: "reopen-terminal", Rule: "TASK-STATUS-TRANSITION", Bugs: Bugs{Server: server.Bugs{ReopenTerminal: true}}},
		{Name: "not-found-internal", Rule: "TASK-NOT-FOUND", Bugs: Bugs{Server: server.Bugs{NotFoundInternal: true}}},
		{Name: "no-created-at", Rule: "TASK-FIELDS", Bugs: Bugs{Server: server.Bugs{NoCreatedAt: true}}},
		{Name: "no-related-task", Rule: "TASK-RESULT", Bugs: Bugs{Server: server.Bugs{NoRelatedTask: true}}},
		{Name: "shared-tasks", Rule: "TASK-ISOLATION", Bugs: Bugs{Server: server.Bugs{SharedTasks: true}}},
		{Name: "lastseqnr-zero", Rule: "S1905-LASTSEQNR-INVALID", Bugs: Bugs{Server: server.Bugs{LastSeqNrZero: true}}, Unreachable: "the reference client never sends lastSeqNr 0 (it resumes from the last segment it has, 1 or more)"},
		{Name: "resume-off-by-one", Rule: "S1905-RESUME", Bugs: Bugs{Server: server.Bugs{ResumeOffByOne: true}}},
		{Name: "reversed-merge", Rule: "S1905-MERGE", Bugs: Bugs{Server: server.Bugs{ReversedMerge: true}}, ShownBy: "SIM-LIVENESS: a task-mode call's result (tasks/result, which merges the segments) is wrong; S1905-MERGE compares tasks/result with the segments a stream delivered, and the workload fetches no tasks/result of a streamed task"},
		{Name: "immediate-working", Rule: "S1905-IMMEDIATE", Bugs: Bugs{Server: server.Bugs{ImmediateWorking: true}}},
		{Name: "failed-without-error", Rule: "S1905-COMPLETE", Bugs: Bugs{Server: server.Bugs{FailedWithoutError: true}}},
		{Name: "partials-unasked", Rule: "S2679-NEGOTIATION", Bugs: Bugs{Server: server.Bugs{PartialsUnasked: true}}},
		{Name: "empty-partial", Rule: "S2679-CONTENT", Bugs: Bugs{Server: server.Bugs{EmptyPartial: true}}},
		{Name: "partial-after-terminal", Rule: "S2679-AFTER-TERMINAL", Bugs: Bugs{Server: server.Bugs{PartialAfterTerminal: true}}},
		{Name: "ignore-modes", Rule: "S1905-MODE-SELECT", Bugs: Bugs{Server: server.Bugs{IgnoreModes: true}}},
		{Name: "shared-event-ids", Rule: "HTTP-EVENT-ID-UNIQUE", Bugs: Bugs{HTTP: streamhttp.Bugs{SharedEventIDs: true}}, Unreachable: "HTTP-EVENT-ID-UNIQUE judges event ids on an HTTP trace; the simulation records the client's mcp.Conn, where no event id is seen, and a resumption after a cut (disconnect:stream=post) asks for one stream's id, which the bug leaves unambiguous within the session's one POST stream at a time"},
		{Name: "replay-other-streams", Rule: "HTTP-RESUME-SAME-STREAM", Bugs: Bugs{HTTP: streamhttp.Bugs{ReplayOtherStreams: true}}, Unreachable: "the bug needs a resumption (disconnect:stream=post) while another POST stream of the session holds events; drawn schedules rarely have both in 1,000 seeds (a run of disconnect:stream=post,at=mid,p=0.2 shows it by S2679-SEQ in 12 of 200 seeds)"},
		{Name: "resume-skips-one", Rule: "HTTP-RESUME-COMPLETE", Bugs: Bugs{HTTP: streamhttp.Bugs{ResumeSkipsOne: true}}, Unreachable: "the lost event is a segment the client then misses; drawn schedules cut few POST streams between two segments, and the client's SEP-1905 handling of the final response hides most (a run of disconnect:stream=post,at=mid,p=0.3 --mode streaming shows it by SIM-RESULT in 1 of 50 seeds)"},
		{Name: "missing-session-404", Rule: "HTTP-SESSION", Bugs: Bugs{HTTP: streamhttp.Bugs{MissingSession404: true}}, Unreachable: "the reference client sends its session id on every request after initialize; no request lacks one, and HTTP-SESSION judges the HTTP status of an HTTP trace, where the simulation records the client's mcp.Conn (the check suite's session scenario sends raw requests)"},
		{Name: "cancel-on-disconnect", Rule: "TASK-SURVIVES-REQUEST", Bugs: Bugs{HTTP: streamhttp.Bugs{CancelOnDisconnect: true}}},
		{Name: "broadcast", Rule: "HTTP-NO-BROADCAST", Bugs: Bugs{HTTP: streamhttp.Bugs{Broadcast: true}}, ShownBy: "S2679-SEQ: the client reads each partial twice (on the standalone stream and on a POST stream), so seq repeats; HTTP-NO-BROADCAST judges which HTTP stream carried a message, and the simulation records the client's mcp.Conn, where the streams are merged"},
		{Name: "client-no-dedup", Rule: "CLIENT-DEDUP", Bugs: Bugs{Client: client.Bugs{NoDedup: true}}, ShownBy: "SIM-RESULT: the result the client calls complete holds a segment twice; CLIENT-DEDUP judges a client's delivered output, which the simulation judges as SIM-RESULT"},
		{Name: "client-no-resume", Rule: "CLIENT-RESUME", Bugs: Bugs{Client: client.Bugs{NoResume: true}}, Unreachable: "the reference client resumes a SEP-1905 stream with tasks/result and lastSeqNr only when the transport cannot resume it: over HTTP a cut POST stream is resumed with GET and Last-Event-ID, and over stdio the faults that end a stream end the whole connection, after which the session is gone (the probes ask the server for such a resume, S1905-RESUME, but that tests no client); a cut POST stream the transport resumes shows nothing either (the bug also turns the transport's resumption off, and the call ends with an error a fault explains)"},
		{Name: "client-ignore-poll-interval", Rule: "CLIENT-POLL-INTERVAL", Bugs: Bugs{Client: client.Bugs{IgnorePollInterval: true}}},
	}
}

// SimRule is the rule a run with the bug planted fails: ShownBy's, else
// Rule.
func (b PlantedBug) SimRule() string {
	if b.ShownBy != "" {
		rule, _, _ := strings.Cut(b.ShownBy, ":")
		return rule
	}
	return b.Rule
}

// BugNamed returns the planted bug called name.
func BugNamed(name string) (PlantedBug, error) {
	all := PlantedBugs()
	i := slices.IndexFunc(all, func(b PlantedBug) bool { return b.Name == name })
	if i < 0 {
		names := make([]string, len(all))
		for j, b := range all {
			names[j] = b.Name
		}
		return PlantedBug{}, fmt.Errorf("--bug %q: no such planted bug (%s)", name, strings.Join(names, ", "))
	}
	return all[i], nil
}
