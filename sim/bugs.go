package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/internal/plant"
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
	Client plant.ClientFlaws
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
		{Name: "lastseqnr-zero", Rule: "S1905-LASTSEQNR-INVALID", Bugs: Bugs{Server: server.Bugs{LastSeqNrZero: true}}},
		{Name: "resume-off-by-one", Rule: "S1905-RESUME", Bugs: Bugs{Server: server.Bugs{ResumeOffByOne: true}}},
		{Name: "reversed-merge", Rule: "S1905-MERGE", Bugs: Bugs{Server: server.Bugs{ReversedMerge: true}}, ShownBy: "SIM-LIVENESS: a task-mode call's result (tasks/result, which merges the segments) is wrong; S1905-MERGE compares tasks/result with the segments a stream delivered, and the workload fetches no tasks/result of a streamed task"},
		{Name: "immediate-working", Rule: "S1905-IMMEDIATE", Bugs: Bugs{Server: server.Bugs{ImmediateWorking: true}}},
		{Name: "failed-without-error", Rule: "S1905-COMPLETE", Bugs: Bugs{Server: server.Bugs{FailedWithoutError: true}}},
		{Name: "partials-unasked", Rule: "S2679-NEGOTIATION", Bugs: Bugs{Server: server.Bugs{PartialsUnasked: true}}},
		{Name: "empty-partial", Rule: "S2679-CONTENT", Bugs: Bugs{Server: server.Bugs{EmptyPartial: true}}},
		{Name: "partial-after-terminal", Rule: "S2679-AFTER-TERMINAL", Bugs: Bugs{Server: server.Bugs{PartialAfterTerminal: true}}},
		{Name: "ignore-modes", Rule: "S1905-MODE-SELECT", Bugs: Bugs{Server: server.Bugs{IgnoreModes: true}}},
		{Name: "shared-event-ids", Rule: "HTTP-EVENT-ID-UNIQUE", Bugs: Bugs{HTTP: streamhttp.Bugs{SharedEventIDs: true}}},
		{Name: "replay-other-streams", Rule: "HTTP-RESUME-SAME-STREAM", Bugs: Bugs{HTTP: streamhttp.Bugs{ReplayOtherStreams: true}}},
		{Name: "resume-skips-one", Rule: "HTTP-RESUME-COMPLETE", Bugs: Bugs{HTTP: streamhttp.Bugs{ResumeSkipsOne: true}}},
		{Name: "missing-session-404", Rule: "HTTP-SESSION-MISSING", Bugs: Bugs{HTTP: streamhttp.Bugs{MissingSession404: true}}},
		{Name: "cancel-on-disconnect", Rule: "TASK-SURVIVES-REQUEST", Bugs: Bugs{HTTP: streamhttp.Bugs{CancelOnDisconnect: true}}},
		{Name: "broadcast", Rule: "HTTP-NO-BROADCAST", Bugs: Bugs{HTTP: streamhttp.Bugs{Broadcast: true}}},
		{Name: "client-no-dedup", Rule: "CLIENT-DEDUP", Bugs: Bugs{Client: plant.ClientFlaws{NoDedup: true}}, ShownBy: "SIM-RESULT: the result the client calls complete holds a segment twice; CLIENT-DEDUP judges a client's delivered output, which the simulation judges as SIM-RESULT"},
		{Name: "client-no-resume", Rule: "CLIENT-RESUME", Bugs: Bugs{Client: plant.ClientFlaws{NoResume: true}}},
		{Name: "client-ignore-poll-interval", Rule: "CLIENT-TASKS-GET-INTERVAL", Bugs: Bugs{Client: plant.ClientFlaws{IgnorePollInterval: true}}},
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
