package load

import (
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
)

// Kinds of ModeSpec: how the load generator has its tasks delivered.
const (
	// KindPoll polls tasks/get every PollInterval, then fetches
	// tasks/result: client.ModePoll, without SEP-2679 partials and
	// without the standalone GET stream, so that nothing but polling
	// reaches the client and requests and bytes are polling's alone.
	KindPoll = "poll"
	// KindSSE asks for SEP-1905 streaming: client.ModeStreaming, segments
	// on the tools/call SSE stream, without SEP-2679 partials.
	KindSSE = "sse"
	// KindPartial follows SEP-2679 notifications/tasks/partial on the
	// standalone GET stream, then fetches tasks/result: client.ModePartial.
	KindPartial = "partial"
	// KindImmediate asks for the SEP-1905 immediate response mode:
	// client.ModeImmediate, without partials. A tool that is not done
	// within the server's immediate window falls back (the reference
	// server's slow_text to streaming); ModeResult.Answers tells.
	KindImmediate = "immediate"
	// KindListen follows each task by push in 2026-07-28:
	// subscriptions/listen with the task's id, its end from
	// notifications/tasks (client.StatelessCallOptions.Listen).
	KindListen = "listen"
)

// PollServer is the argument of poll:server, the poll mode at the
// server's interval (pollIntervalMs in 2026-07-28), by a name that says
// so; plain "poll" is the same mode.
const PollServer = "server"

// ModeSpec is one mode of a run, named as on the command line: "poll:1s",
// "poll:100ms", "poll" or "poll:server" (the interval the server
// suggests), "sse", "partial" or "immediate" (2025-11-25), "listen"
// (2026-07-28). A name may end in @REVISION: the mode's tasks then speak
// that revision whatever the run's, so that one run can set polling of
// both revisions side by side ("poll:1s,poll:1s@2026-07-28"; tasksim demo
// does). Names without it are those of the run's revision, as before. It
// marshals as its name.
type ModeSpec struct {
	// Name identifies the mode in results, hlog tags and thresholds.
	Name string
	// Kind is one of the Kind* constants.
	Kind string
	// PollInterval is the poll mode's interval; 0 means the server's
	// pollInterval.
	PollInterval time.Duration
	// Revision is the revision named after @, which the mode's tasks
	// speak whatever the run's; "" means the run's (ModeSpec.revision).
	Revision mcp.Revision
}

// ParseMode reads one mode: KIND or poll:INTERVAL, either followed by
// @REVISION.
func ParseMode(s string) (ModeSpec, error) {
	s = strings.TrimSpace(s)
	base, revName, qualified := strings.Cut(s, "@")
	m, err := parseKind(base)
	if err != nil || !qualified {
		return m, err
	}
	r, err := mcp.ParseRevision(strings.TrimSpace(revName))
	if err != nil {
		return ModeSpec{}, fmt.Errorf("mode %q: %v", s, err)
	}
	if !m.existsIn(r) {
		return ModeSpec{}, fmt.Errorf("mode %q: %s does not exist in %s (%s)", s, m.Kind, r, modesByRevision)
	}
	if m.Kind == KindListen {
		return m, nil // listen is 2026-07-28's alone: its name says so already
	}
	m.Name += "@" + string(r)
	m.Revision = r
	return m, nil
}

// modesByRevision says which modes each revision has, for errors.
const modesByRevision = "2025-11-25: poll, sse, partial, immediate; 2026-07-28: poll, listen"

// parseKind reads a mode without its revision: KIND or poll:INTERVAL.
func parseKind(s string) (ModeSpec, error) {
	s = strings.TrimSpace(s)
	kind, arg, hasArg := strings.Cut(s, ":")
	switch kind {
	case KindPoll:
		if !hasArg {
			return ModeSpec{Name: KindPoll, Kind: KindPoll}, nil
		}
		if arg == PollServer {
			return ModeSpec{Name: KindPoll + ":" + PollServer, Kind: KindPoll}, nil
		}
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return ModeSpec{}, fmt.Errorf("mode %q: the poll interval must be a positive duration such as 100ms or 1s", s)
		}
		return ModeSpec{Name: KindPoll + ":" + d.String(), Kind: KindPoll, PollInterval: d}, nil
	case KindSSE, KindPartial, KindImmediate, KindListen:
		if hasArg {
			return ModeSpec{}, fmt.Errorf("mode %q: %s takes no argument", s, kind)
		}
		return ModeSpec{Name: kind, Kind: kind}, nil
	case "streaming":
		if !hasArg {
			return ModeSpec{Name: KindSSE, Kind: KindSSE}, nil
		}
	}
	return ModeSpec{}, fmt.Errorf("unknown mode %q (want poll:INTERVAL, poll:server, sse, partial, immediate or listen, optionally @REVISION)", s)
}

// ParseModes reads a comma-separated list of modes; a mode may appear once.
func ParseModes(s string) ([]ModeSpec, error) {
	var out []ModeSpec
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		m, err := ParseMode(part)
		if err != nil {
			return nil, err
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("mode %s given twice", m.Name)
		}
		seen[m.Name] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no mode given (want e.g. poll:1s,sse,partial)")
	}
	return out, nil
}

// String returns the mode's name.
func (m ModeSpec) String() string { return m.Name }

// MarshalText implements encoding.TextMarshaler: the name.
func (m ModeSpec) MarshalText() ([]byte, error) { return []byte(m.Name), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *ModeSpec) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// callMode is the reference client's mode for m.
func (m ModeSpec) callMode() client.Mode {
	switch m.Kind {
	case KindPoll:
		return client.ModePoll
	case KindSSE:
		return client.ModeStreaming
	case KindPartial:
		return client.ModePartial
	}
	return client.ModeImmediate
}

// revisionOK says whether m exists in a run of revision: in the
// revision its tasks speak there (ModeSpec.revision).
func (m ModeSpec) revisionOK(revision mcp.Revision) bool { return m.existsIn(m.revision(revision)) }

// existsIn says whether the mode's kind exists in revision r: 2026-07-28
// has polling and listen; 2025-11-25 every mode but listen.
func (m ModeSpec) existsIn(r mcp.Revision) bool {
	if r.IsStateless() {
		return m.Kind == KindPoll || m.Kind == KindListen
	}
	return m.Kind != KindListen
}

// revision is the revision m's tasks speak in a run of revision: the one
// its name gives after @, else 2026-07-28 for listen, which exists only
// there, else the run's. A run can thus set the other revision's modes
// beside its own (tasksim demo does) on the same dual-era server.
func (m ModeSpec) revision(run mcp.Revision) mcp.Revision {
	switch {
	case m.Revision != "":
		return m.Revision
	case m.Kind == KindListen:
		return mcp.Revision20260728
	}
	return run
}

// wantsPartials says whether m's sessions declare tasks.streaming.partial.
func (m ModeSpec) wantsPartials() bool { return m.Kind == KindPartial }

// standaloneStream says whether m's sessions open the standalone GET
// stream: every mode but poll, where nothing the server pushes is wanted.
func (m ModeSpec) standaloneStream() bool { return m.Kind != KindPoll }
