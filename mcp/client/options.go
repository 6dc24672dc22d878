package client

import (
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
)

// Defaults of Options.
const (
	// DefaultPollInterval is the polling interval when neither the call
	// nor the task sets one.
	DefaultPollInterval = time.Second
	// DefaultMaxPending caps the notifications kept for one task id that no
	// call has claimed yet, and the number of such task ids.
	DefaultMaxPending = 1024
)

// Options configure a Client. The zero value (or nil) gives a client that
// declares everything: all three SEP-1905 response modes and SEP-2679
// partial notifications.
type Options struct {
	// Name and Version go into clientInfo; defaults "tasksim" and "dev".
	Name, Version string
	// ProtocolVersion is the revision asked for in initialize; default
	// mcp.LatestProtocolVersion.
	ProtocolVersion string
	// Modes are the SEP-1905 response modes declared in
	// tasks.responses.modes; nil means all three.
	Modes []mcp.ResponseMode
	// NoModes declares no tasks.responses and sends no responseModes:
	// a client without SEP-1905.
	NoModes bool
	// NoPartial leaves tasks.streaming.partial undeclared (SEP-2679 §2.2),
	// so a conforming server sends no partial notifications.
	NoPartial bool
	// DefaultPollInterval is used when neither the call nor the task sets
	// an interval; 0 means DefaultPollInterval.
	DefaultPollInterval time.Duration
	// MaxPending caps notifications buffered for task ids not claimed yet;
	// 0 means DefaultMaxPending.
	MaxPending int
	// OnNotification sees every notification, from the reader goroutine;
	// it must not block.
	OnNotification func(*mcp.Message)
	// Clock is the client's time: timelines, CallResult.Start and End,
	// the poll and cancel timers, the ttl check and the bounds on its own
	// writes. nil means the wall clock; a clock.Sim makes every wait of
	// the client move only when the simulation moves time.
	Clock clock.Clock
	// PollPolicy, when set, decides each wait before a tasks/get from the
	// interval the call would wait: CallOptions.PollInterval, else the
	// task's pollInterval (2025-11-25 Tasks, "Getting Tasks": requestors
	// SHOULD respect it), else DefaultPollInterval. nil waits that
	// interval. It is called from the goroutine running CallTool and must
	// not block.
	PollPolicy func(interval time.Duration) time.Duration
	// MaxReissues caps how many times a request of the stateless era is
	// re-issued with a new id after its stream broke before the answer;
	// 0 means DefaultMaxReissues, a negative value re-issues nothing.
	MaxReissues int
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
	if out.ProtocolVersion == "" {
		out.ProtocolVersion = mcp.LatestProtocolVersion
	}
	if out.Modes == nil {
		out.Modes = mcp.AllModes()
	}
	if out.NoModes {
		out.Modes = nil
	}
	if out.DefaultPollInterval <= 0 {
		out.DefaultPollInterval = DefaultPollInterval
	}
	if out.MaxPending <= 0 {
		out.MaxPending = DefaultMaxPending
	}
	out.Clock = clock.Or(out.Clock)
	return out
}

// Client is the reference client. It holds options; Connect opens
// sessions.
type Client struct {
	opts Options
}

// New returns a client. A nil opts gives every default.
func New(opts *Options) *Client { return &Client{opts: opts.withDefaults()} }

// Capabilities returns what the client declares in initialize: SEP-1905's
// tasks.responses.modes and SEP-2679's tasks.streaming.partial.
func (c *Client) Capabilities() mcp.ClientCapabilities {
	var tasks *mcp.TasksCapability
	if len(c.opts.Modes) > 0 {
		tasks = &mcp.TasksCapability{Responses: &mcp.ResponsesCapability{Modes: c.opts.Modes}}
	}
	if !c.opts.NoPartial {
		if tasks == nil {
			tasks = &mcp.TasksCapability{}
		}
		tasks.Streaming = &mcp.StreamingCapability{Partial: &mcp.Empty{}}
	}
	return mcp.ClientCapabilities{Tasks: tasks}
}
