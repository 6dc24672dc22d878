package server

import (
	"crypto/rand"
	"io"
	"log/slog"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// Defaults of Options. They are the documented limits of the reference
// server (2025-11-25 Tasks, "Resource Management": receivers SHOULD document
// their maximum ttl and maximum concurrent tasks per requestor).
const (
	DefaultTTL                = 5 * time.Minute
	DefaultMaxTTL             = time.Hour
	DefaultPollInterval       = 500 * time.Millisecond
	DefaultMaxTasksPerSession = 10000
	DefaultListPageSize       = 50
	DefaultImmediateWindow    = 20 * time.Millisecond
	// DefaultMaxTasks caps the tasks the server stores, all sessions
	// together, live or finished (until their ttl).
	DefaultMaxTasks = 100_000
	// DefaultMaxSubscriptions caps the subscriptions/listen streams open
	// at once, and DefaultMaxListenTaskIDs the tasks one of them watches.
	DefaultMaxSubscriptions = 10_000
	DefaultMaxListenTaskIDs = 1_000
	// DefaultMaxTaskBytes, DefaultMaxSessionBytes and DefaultMaxServerBytes
	// bound the result bytes a task, a session and the server may hold.
	DefaultMaxTaskBytes    = 64 << 20
	DefaultMaxSessionBytes = 256 << 20
	DefaultMaxServerBytes  = 1 << 30
	// DefaultMaxTaskOpsPerSecond is the per-session rate of task
	// operations.
	DefaultMaxTaskOpsPerSecond = 5000
	// expiredMemory is how long an expired task's id is remembered, so that
	// a lookup can say "expired" rather than "not found".
	expiredMemory = 10 * time.Minute
)

// Options configure a Server. The zero value (or nil) gives a server that
// offers everything: base Tasks, all three SEP-1905 response modes and
// SEP-2679 partial notifications.
type Options struct {
	// Name and Version go into serverInfo.
	Name, Version string
	// Modes are the SEP-1905 response modes offered (tasks.responses.modes).
	// Nil means all three. Set NoModes for a server without SEP-1905.
	Modes []mcp.ResponseMode
	// NoModes turns SEP-1905 off: no tasks.responses capability, every
	// task-augmented call answered in task mode, responseModes ignored.
	NoModes bool
	// NoPartial turns SEP-2679 off: no tasks.streaming.partial capability
	// and no partial notifications.
	NoPartial bool
	// NoStatusNotifications stops notifications/tasks/status (they are
	// optional in the spec).
	NoStatusNotifications bool

	// DefaultTTL is the ttl of a task whose request asks for none.
	DefaultTTL time.Duration
	// MaxTTL caps the ttl a request may ask for.
	MaxTTL time.Duration
	// PollInterval is the pollInterval suggested in every task.
	PollInterval time.Duration
	// MaxTasksPerSession caps the live (non-terminal) tasks of a session;
	// a task-augmented call over it gets a -32603 error.
	MaxTasksPerSession int
	// MaxTasks caps the tasks the server stores, of both eras (every
	// session's and the stateless requests'), live or finished; a call
	// that would make a task over it gets a -32603 error
	// (2025-11-25 Tasks, "Security Considerations": receivers SHOULD limit
	// the resources a requestor may consume).
	MaxTasks int
	// MaxSubscriptions caps the subscriptions/listen streams of the
	// stateless era open at once; a listen over it gets -32603.
	MaxSubscriptions int
	// MaxListenTaskIDs caps the distinct task ids one listen's taskIds
	// may name; a listen naming more gets -32602.
	MaxListenTaskIDs int
	// MaxTaskBytes bounds the result a task (or a plain call) may hold:
	// arguments that ask for more (Tool.Size) get -32602 before anything
	// runs, and a tool that emits more fails with ErrBudget.
	MaxTaskBytes int64
	// MaxSessionBytes and MaxServerBytes bound the result bytes held by
	// the tasks of one session and of all sessions: a call that would go
	// over gets -32603, a running task that would fails with ErrBudget.
	MaxSessionBytes int64
	MaxServerBytes  int64
	// MaxTaskOpsPerSecond rate-limits the task operations of a session
	// (tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel): a
	// bucket of this many that refills at this rate on Clock; a request
	// finding it empty gets -32603 (2025-11-25 Tasks, "Security
	// Considerations": receivers SHOULD rate-limit task operations).
	// 0 means DefaultMaxTaskOpsPerSecond; negative, no limit.
	MaxTaskOpsPerSecond int
	// ListPageSize is the page size of tasks/list.
	ListPageSize int
	// ImmediateWindow is how long a call negotiated as immediate (or
	// answered in streaming mode) may run before the server decides its
	// result is not available at request time and falls back to streaming
	// or task (SEP-1905, "Server Response Decision Process"). It is
	// measured on Clock: on a simulated clock it passes only as simulated
	// time does, however fast or slow the machine runs the tool.
	ImmediateWindow time.Duration

	// Tools replaces the built-in tool set when non-nil.
	Tools []*Tool
	// Clock is the source of every timestamp, ttl deadline, tool delay and
	// the immediate window; nil means the wall clock (clock.System). A
	// clock.Sim fires the server's timers in the goroutine that advances
	// it; none of them blocks there.
	Clock clock.Clock
	// Rand is the source of task ids; nil means crypto/rand. With the
	// default, ids are version 4 UUIDs with 122 random bits, as 2025-11-25
	// Tasks ("Security Considerations") asks: cryptographically secure and
	// hard to guess. Any other reader gives ids only as unguessable as it
	// is; a seeded one (math/rand/v2's *ChaCha8 is an io.Reader) gives the
	// same ids in the same order on every run, for simulation. The server
	// serializes its reads, so the reader need not be safe for concurrent
	// use.
	Rand io.Reader
	// StateRand is the source of the key that seals every requestState
	// (2026-07-28 Multi Round-Trip Requests), read once when the server
	// starts; nil means crypto/rand. A seeded reader gives the same
	// requestState to the same request on every run, for simulation, and
	// a key only as secret as the seed.
	StateRand io.Reader
	// TaskIDs, when set, makes the id of each new task in place of the
	// UUIDs drawn from Rand. Its ids are only as unique and as hard to
	// guess as it makes them (2025-11-25 Tasks › Security Considerations:
	// "cryptographically secure task IDs with enough entropy to prevent
	// guessing"). It may be called from several goroutines at once.
	TaskIDs func() (string, error)
	// TaskScope says which session's tasks a request may reach; the zero
	// value, ScopeSession, only its own.
	TaskScope Scope
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Revisions are the protocol revisions the server serves, in any
	// order; nil or empty means every revision tasksim knows
	// (mcp.Revisions), a dual-era server. The requests of a revision left
	// out get the version error of the stateless revision (-32022, naming
	// the versions served; see HandleStateless). An unknown revision is
	// ignored.
	Revisions []mcp.Revision
	// StatelessTasks says which stateless tools/call requests that declare
	// the tasks extension run as tasks; the zero value, TasksByTool,
	// follows each tool's execution.taskSupport (docs/server.md, "Tasks in 2026-07-28").
	StatelessTasks TaskPolicy
}

// Scope is the set of tasks a request may reach (2025-11-25 Tasks ›
// Security Considerations › Task Isolation and Access Control).
type Scope uint8

const (
	// ScopeSession binds each task to the session that created it:
	// tasks/get, tasks/result and tasks/cancel of another session's task
	// are answered "not found", and tasks/list lists the session's own.
	ScopeSession Scope = iota
	// ScopeServer lets every session reach every task by its id, as a
	// server without sessions or authorization context does ("Context-
	// binding is not practical for all applications"); tasks/list still
	// lists the session's own. The check suite's TASK-ISOLATION fails
	// such a server.
	ScopeServer
)

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Name == "" {
		out.Name = "tasksim"
	}
	if out.Version == "" {
		out.Version = "dev"
	}
	if out.Modes == nil {
		out.Modes = mcp.AllModes()
	}
	if out.NoModes {
		out.Modes = nil
	}
	out.defaultLimits()
	if out.MaxTaskOpsPerSecond == 0 {
		out.MaxTaskOpsPerSecond = DefaultMaxTaskOpsPerSecond
	}
	out.Revisions = servedRevisions(out.Revisions)
	out.Clock = clock.Or(out.Clock)
	if out.Rand == nil {
		out.Rand = rand.Reader
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out
}

// defaultLimits gives every time and limit of o that is zero or less its
// default.
func (o *Options) defaultLimits() {
	positiveOr(&o.DefaultTTL, DefaultTTL)
	positiveOr(&o.MaxTTL, DefaultMaxTTL)
	positiveOr(&o.PollInterval, DefaultPollInterval)
	positiveOr(&o.MaxTasksPerSession, DefaultMaxTasksPerSession)
	positiveOr(&o.MaxTasks, DefaultMaxTasks)
	positiveOr(&o.MaxSubscriptions, DefaultMaxSubscriptions)
	positiveOr(&o.MaxListenTaskIDs, DefaultMaxListenTaskIDs)
	positiveOr(&o.MaxTaskBytes, DefaultMaxTaskBytes)
	positiveOr(&o.MaxSessionBytes, DefaultMaxSessionBytes)
	positiveOr(&o.MaxServerBytes, DefaultMaxServerBytes)
	positiveOr(&o.ListPageSize, DefaultListPageSize)
	positiveOr(&o.ImmediateWindow, DefaultImmediateWindow)
}

// positiveOr sets *v to d when *v is zero or less.
func positiveOr[T ~int | ~int64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
