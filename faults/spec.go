package faults

import (
	"fmt"
	"strings"
)

// Spec is a fault as written by a user: a name and its parameters, in the
// order given. Its text form is name[:key=value[,key=value]...].
type Spec struct {
	Name   string
	Params []Param
}

// Param is one key=value of a Spec.
type Param struct {
	Key, Value string
}

// String is the spec's text form, which ParseSpec reads back.
func (s Spec) String() string {
	if len(s.Params) == 0 {
		return s.Name
	}
	parts := make([]string, len(s.Params))
	for i, p := range s.Params {
		parts[i] = p.Key + "=" + p.Value
	}
	return s.Name + ":" + strings.Join(parts, ",")
}

// Get returns the value of key, and whether it was given.
func (s Spec) Get(key string) (string, bool) {
	for _, p := range s.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// SpecError is a spec that does not parse or does not name a known fault
// or parameter. Its message names the bad part.
type SpecError struct {
	Spec string // the whole spec as given
	Part string // the part at fault: a name, a key, key=value
	Why  string
}

func (e *SpecError) Error() string {
	if e.Part == "" || e.Part == e.Spec {
		return fmt.Sprintf("fault %q: %s", e.Spec, e.Why)
	}
	return fmt.Sprintf("fault %q: %s: %s", e.Spec, e.Part, e.Why)
}

// ParseSpec splits text into a Spec. It checks the grammar only; a
// Registry checks names and parameters.
func ParseSpec(text string) (Spec, error) {
	text = strings.TrimSpace(text)
	name, rest, hasParams := strings.Cut(text, ":")
	if name == "" {
		return Spec{}, &SpecError{Spec: text, Why: "no fault name (want name[:key=value,...])"}
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return Spec{}, &SpecError{Spec: text, Part: name, Why: "a fault name has only lower-case letters, digits and '-'"}
		}
	}
	s := Spec{Name: name}
	if !hasParams {
		return s, nil
	}
	if strings.TrimSpace(rest) == "" {
		return Spec{}, &SpecError{Spec: text, Part: name + ":", Why: "nothing after ':'"}
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return Spec{}, &SpecError{Spec: text, Part: kv, Why: "want key=value"}
		}
		if seen[k] {
			return Spec{}, &SpecError{Spec: text, Part: k, Why: "given twice"}
		}
		seen[k] = true
		s.Params = append(s.Params, Param{Key: k, Value: v})
	}
	return s, nil
}
