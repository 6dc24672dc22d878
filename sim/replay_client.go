package sim

import (
	"context"
	"errors"

	"github.com/tasksim/tasksim/traces"
)

// ReplayClient serves the server half of a trace to a client command.
func ReplayClient(ctx context.Context, src *traces.Reader, command []string, o *ReplayOptions) (*ReplayResult, error) {
	return nil, errors.New("not yet")
}
