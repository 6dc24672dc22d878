package load

import "time"

// Observer sees a run as it goes: every task's start and end, and every
// interval's figures. Started and Ended are called from the tasks'
// goroutines, many at once; Interval from the collector's goroutine, every
// Config.Interval and once more after the last task (Options.Progress
// skips that last, short interval). None may block for long.
type Observer interface {
	Started(mode string, lag time.Duration)
	Ended(mode string, t TaskEnd)
	Interval(p Progress)
}

// TaskEnd is what one task measured. Latencies count from the intended
// start; they are set only when OK.
type TaskEnd struct {
	OK bool
	// ErrKind is one of the ErrKind* constants (or rpc-CODE) when !OK.
	ErrKind      string
	TTFP, TTR    time.Duration
	Discovery    time.Duration
	HasDiscovery bool
	// Requests is the HTTP requests made for the task.
	Requests int64
}

func (s *sample) ended() TaskEnd {
	return TaskEnd{OK: s.ok, ErrKind: s.errKind, TTFP: s.ttfp, TTR: s.ttr, Discovery: s.discovery, HasDiscovery: s.hasDiscovery, Requests: s.requests}
}
