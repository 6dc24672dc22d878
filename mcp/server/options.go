package server

import (
	"io"

	"github.com/tasksim/tasksim/mcp/clock"

	"log/slog"
	"time"

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
	// ListPageSize is the page size of tasks/list.
	ListPageSize int
	// ImmediateWindow is how long a call negotiated as immediate may run
	// before the server decides its result is not available at request time
	// and falls back to streaming or task (SEP-1905, "Server Response
	// Decision Process").
	ImmediateWindow time.Duration

	// Tools replaces the built-in tool set when non-nil.
	Tools []*Tool
	// Clock is the source of time; nil means the wall clock. A clock.Sim
	// makes every timestamp, ttl and tool delay simulated.
	Clock clock.Clock
	// Rand is where task ids' random bits come from; nil means
	// crypto/rand. The default keeps the entropy rule (UUIDv4, 122 random
	// bits, 2025-11-25 Tasks, Security Considerations); a seeded reader
	// (math/rand/v2's ChaCha8) makes a simulated run's ids repeat.
	Rand io.Reader
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Bugs plants known bugs, for tests only (see Bugs); zero for any
	// other use.
	Bugs Bugs
}

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
		out.Modes = mcp.AllModes
	}
	if out.NoModes {
		out.Modes = nil
	}
	if out.DefaultTTL <= 0 {
		out.DefaultTTL = DefaultTTL
	}
	if out.MaxTTL <= 0 {
		out.MaxTTL = DefaultMaxTTL
	}
	if out.PollInterval <= 0 {
		out.PollInterval = DefaultPollInterval
	}
	if out.MaxTasksPerSession <= 0 {
		out.MaxTasksPerSession = DefaultMaxTasksPerSession
	}
	if out.ListPageSize <= 0 {
		out.ListPageSize = DefaultListPageSize
	}
	if out.ImmediateWindow <= 0 {
		out.ImmediateWindow = DefaultImmediateWindow
	}
	if out.Clock == nil {
		out.Clock = clock.System{}
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	return out
}
