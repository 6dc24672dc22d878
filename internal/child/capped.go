package child

import (
	"errors"
	"fmt"
	"sync"
)

// ErrOutputLimit is the error of a write past a Capped's limit.
var ErrOutputLimit = errors.New("output over its limit")

// Capped keeps what a child prints, up to a limit: the first Limit bytes.
// A write that would pass the limit keeps what fits and fails with
// ErrOutputLimit; exec then stops reading the child's output and closes
// the pipe, so a child that floods its output sees a broken pipe instead
// of filling tasksim's memory. Safe for concurrent use.
type Capped struct {
	limit int

	mu   sync.Mutex
	buf  []byte
	over bool
}

// NewCapped returns a Capped that keeps at most limit bytes.
func NewCapped(limit int) *Capped { return &Capped{limit: limit} }

// Write implements io.Writer.
func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - len(c.buf)
	if len(p) <= room {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	c.over = true
	c.buf = append(c.buf, p[:room]...)
	return room, fmt.Errorf("%w (%d bytes)", ErrOutputLimit, c.limit)
}

// String returns the bytes kept.
func (c *Capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

// Over reports whether a write passed the limit: String is not all that
// was written.
func (c *Capped) Over() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.over
}
