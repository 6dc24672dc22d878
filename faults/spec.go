package faults

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
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
	part := e.Part
	if strings.IndexFunc(part, unicode.IsControl) >= 0 {
		part = strconv.Quote(part) // the error stays one line
	}
	return fmt.Sprintf("fault %q: %s: %s", e.Spec, part, e.Why)
}

// ParseSpec splits text into a Spec. It checks the grammar only; a
// Registry checks names and parameters.
func ParseSpec(text string) (Spec, error) {
	text = strings.TrimSpace(text)
	name, rest, hasParams := strings.Cut(text, ":")
	if name == "" {
		return Spec{}, &SpecError{Spec: text, Why: "no fault name (want name[:key=value,...])"}
	}
	if why := checkName(name); why != "" {
		return Spec{}, &SpecError{Spec: text, Part: name, Why: why}
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
		if why := checkKey(k); why != "" {
			return Spec{}, &SpecError{Spec: text, Part: k, Why: why}
		}
		if seen[k] {
			return Spec{}, &SpecError{Spec: text, Part: k, Why: "given twice"}
		}
		seen[k] = true
		s.Params = append(s.Params, Param{Key: k, Value: v})
	}
	return s, nil
}

// NewSpec makes a Spec from its fields (a fault file's JSON form),
// checking each as ParseSpec would read it back from the spec's text: a
// name only, keys once each, values that hold no ',' (the separator) and
// no space at either end or control character. So a Spec from NewSpec
// and ParseSpec of its String are the same.
func NewSpec(name string, params []Param) (Spec, error) {
	s := Spec{Name: name, Params: params}
	text := s.String()
	if name == "" {
		return Spec{}, &SpecError{Spec: text, Why: "no fault name"}
	}
	if strings.ContainsAny(name, ":,=") {
		return Spec{}, &SpecError{Spec: text, Part: name, Why: "a fault name only, without parameters"}
	}
	if why := checkName(name); why != "" {
		return Spec{}, &SpecError{Spec: text, Part: name, Why: why}
	}
	seen := map[string]bool{}
	for _, p := range params {
		if why := checkKey(p.Key); why != "" {
			return Spec{}, &SpecError{Spec: text, Part: p.Key, Why: why}
		}
		if seen[p.Key] {
			return Spec{}, &SpecError{Spec: text, Part: p.Key, Why: "given twice"}
		}
		seen[p.Key] = true
		if why := checkValue(p.Value); why != "" {
			return Spec{}, &SpecError{Spec: text, Part: p.Key + "=" + p.Value, Why: why}
		}
	}
	return s, nil
}

// checkName says what is wrong with a fault name, or "".
func checkName(name string) string {
	if !nameLike(name) {
		return "a fault name has only lower-case letters, digits and '-'"
	}
	return ""
}

// checkKey says what is wrong with a parameter name, or "".
func checkKey(key string) string {
	if !nameLike(key) {
		return "a parameter name has only lower-case letters, digits and '-'"
	}
	return ""
}

// checkValue says what is wrong with a parameter value, or "": one that
// the spec's text form would not give back as it is.
func checkValue(v string) string {
	switch {
	case v == "":
		return "empty value"
	case strings.Contains(v, ","):
		return "a value holds no ',' (it separates parameters)"
	case strings.TrimSpace(v) != v:
		return "a value has no space at either end"
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "a value holds no control character"
	}
	return ""
}

func nameLike(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
