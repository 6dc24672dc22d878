package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// File is the file form of a run's faults, for CI: JSON
//
//	{"seed": 7, "faults": ["drop-sse-event:nth=3", {"fault": "delay", "params": {"d": "200ms"}}]}
//
// or text, one spec a line, '#' starting a comment. A seed in the file is
// used when none is given on the command line.
type File struct {
	Seed    *uint64
	Specs   []Spec
	HasSeed bool
}

type fileJSON struct {
	Seed   *uint64           `json:"seed"`
	Faults []json.RawMessage `json:"faults"`
}

type specJSON struct {
	Fault  string            `json:"fault"`
	Params map[string]string `json:"params"`
}

// ParseFile reads a fault file's contents; name is used in errors.
func ParseFile(name string, data []byte) (*File, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return parseJSONFile(name, trimmed)
	}
	f := &File{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		if text = strings.TrimSpace(text); text == "" {
			continue
		}
		s, err := ParseSpec(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		f.Specs = append(f.Specs, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func parseJSONFile(name string, data []byte) (*File, error) {
	var fj fileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fj); err != nil {
		return nil, fmt.Errorf("%s: not a fault file: %v", name, err)
	}
	f := &File{Seed: fj.Seed, HasSeed: fj.Seed != nil}
	for i, raw := range fj.Faults {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var sj specJSON
			d := json.NewDecoder(bytes.NewReader(raw))
			d.DisallowUnknownFields()
			if err := d.Decode(&sj); err != nil || sj.Fault == "" {
				return nil, fmt.Errorf("%s: faults[%d]: want a spec string or {\"fault\": NAME, \"params\": {...}}", name, i)
			}
			keys := make([]string, 0, len(sj.Params))
			for k := range sj.Params {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			parts := make([]string, len(keys))
			for j, k := range keys {
				parts[j] = k + "=" + sj.Params[k]
			}
			text = sj.Fault
			if len(parts) > 0 {
				text += ":" + strings.Join(parts, ",")
			}
		}
		s, err := ParseSpec(text)
		if err != nil {
			return nil, fmt.Errorf("%s: faults[%d]: %w", name, i, err)
		}
		f.Specs = append(f.Specs, s)
	}
	return f, nil
}
