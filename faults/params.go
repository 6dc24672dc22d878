package faults

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/mcp"
)

// Params reads a spec's parameters with types, remembering the first error
// (which names the parameter).
type Params struct {
	spec Spec
	err  error
}

func (p *Params) fail(key, value, why string) {
	if p.err == nil {
		p.err = &SpecError{Spec: p.spec.String(), Part: key + "=" + value, Why: why}
	}
}

// Err returns the first error met reading parameters.
func (p *Params) Err() error { return p.err }

// String returns key's value, or def.
func (p *Params) String(key, def string) string {
	if v, ok := p.spec.Get(key); ok {
		return v
	}
	return def
}

// Int returns key's value as an integer in [lo, hi], or def.
func (p *Params) Int(key string, def, lo, hi int64) int64 {
	v, ok := p.spec.Get(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		p.fail(key, v, fmt.Sprintf("want an integer from %d to %d", lo, hi))
		return def
	}
	return n
}

// Duration returns key's value as a duration in [0, max], or def.
func (p *Params) Duration(key string, def, max time.Duration) time.Duration {
	v, ok := p.spec.Get(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > max {
		p.fail(key, v, fmt.Sprintf("want a duration from 0 to %s, e.g. 200ms", max))
		return def
	}
	return d
}

// Prob returns key's value as a probability in [0, 1], or def.
func (p *Params) Prob(key string, def float64) float64 {
	v, ok := p.spec.Get(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
		p.fail(key, v, "want a probability from 0 to 1")
		return def
	}
	return f
}

// Choice returns key's value, which must be one of choices, or def.
func (p *Params) Choice(key, def string, choices ...string) string {
	v, ok := p.spec.Get(key)
	if !ok {
		return def
	}
	for _, c := range choices {
		if v == c {
			return v
		}
	}
	p.fail(key, v, fmt.Sprintf("want one of %v", choices))
	return def
}

// Revision returns key's value as a protocol revision tasksim knows, or the
// zero Revision when key is not given.
func (p *Params) Revision(key string) mcp.Revision {
	v, ok := p.spec.Get(key)
	if !ok {
		return ""
	}
	r, err := mcp.ParseRevision(v)
	if err != nil {
		names := make([]string, 0, 2)
		for _, k := range mcp.Revisions() {
			names = append(names, string(k))
		}
		p.fail(key, v, "unknown protocol revision (want "+strings.Join(names, " or ")+")")
		return ""
	}
	return r
}
