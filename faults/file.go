package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// parseJSONFile reads the JSON form, field by field: one object and
// nothing after it, no member given twice, each fault a spec string or
// {"fault": NAME, "params": {KEY: "VALUE", ...}} whose name and values
// NewSpec accepts.
func parseJSONFile(name string, data []byte) (*File, error) {
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("%s: not a fault file: %v", name, err)
	}
	// Members are read by their exact names: encoding/json would match
	// "Faults" too.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: not a fault file: %v", name, err)
	}
	f := &File{}
	var faults []json.RawMessage
	for k, v := range top {
		var err error
		switch k {
		case "seed":
			err = json.Unmarshal(v, &f.Seed)
		case "faults":
			err = json.Unmarshal(v, &faults)
		default:
			err = errors.New("unknown member (want seed, faults)")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: not a fault file: %s: %v", name, k, err)
		}
	}
	f.HasSeed = f.Seed != nil
	for i, raw := range faults {
		s, err := parseJSONSpec(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: faults[%d]: %w", name, i, err)
		}
		f.Specs = append(f.Specs, s)
	}
	return f, nil
}

// parseJSONSpec reads one element of "faults".
func parseJSONSpec(raw json.RawMessage) (Spec, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return ParseSpec(text)
	}
	const want = `want a spec string or {"fault": NAME, "params": {KEY: "VALUE", ...}}`
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Spec{}, errors.New(want)
	}
	var fault *string
	var params map[string]json.RawMessage
	for k, v := range obj {
		var err error
		switch k {
		case "fault":
			err = json.Unmarshal(v, &fault)
		case "params":
			err = json.Unmarshal(v, &params)
		default:
			err = errors.New("unknown member")
		}
		if err != nil {
			return Spec{}, fmt.Errorf("%s: %v; %s", k, err, want)
		}
	}
	if fault == nil {
		return Spec{}, fmt.Errorf(`no "fault": %s`, want)
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var ps []Param
	for _, k := range keys {
		var v string
		if err := json.Unmarshal(params[k], &v); err != nil {
			return Spec{}, fmt.Errorf("params.%s: want a string, not %s", k, params[k])
		}
		ps = append(ps, Param{Key: k, Value: v})
	}
	return NewSpec(*fault, ps)
}

// checkJSON checks what encoding/json lets pass: data is one JSON value
// with nothing after it, and no object in it names a member twice (the
// decoder would keep the last silently).
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkValueTokens(dec, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// maxJSONDepth bounds the nesting checkValueTokens follows.
const maxJSONDepth = 64

// checkValueTokens reads one JSON value from dec; path names it in
// errors ("" for the top, faults[1].params).
func checkValueTokens(dec *json.Decoder, path string, depth int) error {
	if depth > maxJSONDepth {
		return fmt.Errorf("%s: nested too deep", path)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			at := k
			if path != "" {
				at = path + "." + k
			}
			if seen[k] {
				return fmt.Errorf("%s: given twice", at)
			}
			seen[k] = true
			if err := checkValueTokens(dec, at, depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := checkValueTokens(dec, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	return nil
}
