package cli

import (
	"encoding/json"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/load"
)

// addToolFlags adds --tool and --args (load, and demo with --server).
func addToolFlags(f *pflag.FlagSet, o *LoadOptions) {
	f.StringVar(&o.Tool, "tool", "", "the tool every task calls (default: the reference server's slow_text with the drawn shape)")
	f.StringVar(&o.Args, "args", "", `--tool's arguments: a JSON object with {{task}}, {{draw}}, {{durationMs}}, {{chunks}}, {{chunkSize}} replaced per task, or @FILE of one JSON object per line`)
}

// toolConfig puts --tool and --args into cfg.
func toolConfig(cfg *load.Config, o *LoadOptions) error {
	if o.Args != "" && o.Tool == "" {
		return usagef("--args needs --tool (slow_text's arguments come from the task shape flags)")
	}
	cfg.Tool = o.Tool
	name, ok := strings.CutPrefix(o.Args, "@")
	if !ok {
		cfg.Args = o.Args
		return nil
	}
	b, err := readInput(name)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if !json.Valid([]byte(line)) || !strings.HasPrefix(line, "{") {
			return usagef("--args %s: line %d: not a JSON object: %.60s", o.Args, i+1, line)
		}
		cfg.ArgSets = append(cfg.ArgSets, json.RawMessage(line))
	}
	if len(cfg.ArgSets) == 0 {
		return usagef("--args %s: no argument sets in it", o.Args)
	}
	return nil
}
