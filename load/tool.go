package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Placeholders of Config.Args, replaced per task (as JSON numbers).
var argPlaceholders = []string{
	"{{task}}",       // the task's number within its mode: 0, 1, 2, ...
	"{{draw}}",       // a number in [0, 1) drawn from the seed and the task's number
	"{{durationMs}}", // the drawn shape's duration in ms (integer)
	"{{chunks}}",     // the drawn shape's chunks
	"{{chunkSize}}",  // the drawn shape's chunk size
}

// toolCall returns the tool task k calls and its arguments: slow_text with
// the drawn shape, or Config.Tool with Config.Args (its placeholders
// replaced) or the (k mod n)-th of Config.ArgSets.
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
	r := strings.NewReplacer(
		"{{task}}", strconv.FormatInt(k, 10),
		"{{draw}}", strconv.FormatFloat(draw, 'f', -1, 64),
		"{{durationMs}}", strconv.FormatInt(sh.duration.Milliseconds(), 10),
		"{{chunks}}", strconv.Itoa(sh.chunks),
		"{{chunkSize}}", strconv.Itoa(sh.chunkSize),
	)
	return c.Tool, []byte(r.Replace(c.Args))
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
		if err := jsonObject(args); err != nil {
			return fmt.Errorf("arguments %.60s: with the placeholders replaced, %w", c.Args, err)
		}
	}
	for i, a := range c.ArgSets {
		if err := jsonObject(a); err != nil {
			return fmt.Errorf("argument set %d: %w", i+1, err)
		}
	}
	return nil
}

func jsonObject(b []byte) error {
	if !json.Valid(b) || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return errors.New("not a JSON object")
	}
	return nil
}
