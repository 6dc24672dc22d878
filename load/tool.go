package load

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/tasksim/tasksim/internal/toolargs"
)

// toolCall returns the tool task k calls and its arguments: slow_text with
// the drawn shape, or Config.Tool with Config.Args (its placeholders,
// toolargs.Placeholders, filled) or the (k mod n)-th of Config.ArgSets.
func (c Config) toolCall(k int64, sh taskShape) (string, []byte) {
	switch {
	case c.Tool == "":
		return ToolName, sh.args()
	case len(c.ArgSets) > 0:
		return c.Tool, c.ArgSets[k%int64(len(c.ArgSets))]
	case c.Args == "":
		return c.Tool, []byte("{}")
	}
	draw := rand.New(rand.NewPCG(c.Seed, uint64(k)|1<<63)).Float64()
	return c.Tool, toolargs.Fill(c.Args, toolargs.Values{
		Task: k, Draw: draw, DurationMs: sh.duration.Milliseconds(), Chunks: sh.chunks, ChunkSize: sh.chunkSize,
	})
}

// validateTool checks the tool and its arguments: Args and ArgSets need a
// Tool, and every argument set (Args with its placeholders replaced) is a
// JSON object.
func (c Config) validateTool() error {
	switch {
	case c.Tool == "" && (c.Args != "" || len(c.ArgSets) > 0):
		return errors.New("arguments given without a tool")
	case c.Args != "" && len(c.ArgSets) > 0:
		return errors.New("give an argument template or argument sets, not both")
	}
	if c.Args != "" {
		_, args := c.toolCall(0, c.Shape.draw(c.Seed, 0))
		if err := toolargs.Object(args); err != nil {
			return fmt.Errorf("arguments %.60s: with the placeholders replaced, %w", c.Args, err)
		}
	}
	for i, a := range c.ArgSets {
		if err := toolargs.Object(a); err != nil {
			return fmt.Errorf("argument set %d: %w", i+1, err)
		}
	}
	return nil
}
