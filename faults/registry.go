package faults

import (
	"slices"
	"strings"
)

// Registry maps fault names to their kinds. It is a value: make one with
// NewRegistry or Builtin, never filled by init.
type Registry struct {
	kinds map[string]Kind
}

// NewRegistry returns a registry of kinds.
func NewRegistry(kinds ...Kind) *Registry {
	r := &Registry{kinds: map[string]Kind{}}
	for _, k := range kinds {
		r.kinds[k.Name] = k
	}
	return r
}

// Builtin returns a registry of every fault tasksim ships.
func Builtin() *Registry {
	return NewRegistry(
		dropSSEEventKind, duplicateSeqNrKind, ttlExpiryKind, disconnectKind,
		delayKind, reorderKind, serverRestartKind, httpStatusKind,
		dropResponseKind, dropPartialKind, stallKind,
		cutRequestKind, dropTaskNotificationKind, duplicateTaskNotificationKind,
		dropListenAckKind, wrongReplicaKind, wrongMcpNameKind,
	)
}

// Kinds returns the registered kinds sorted by name.
func (r *Registry) Kinds() []Kind {
	out := make([]Kind, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	return Names(r.Kinds())
}

// Bound is a fault made from a spec: the fault, its selector and the spec
// it came from.
type Bound struct {
	Spec     Spec
	Kind     *Kind
	Selector Selector
	Fault    Fault
}

// Parse reads one spec and builds its fault. Errors are *SpecError and
// name the bad part: an unknown fault, an unknown parameter, a bad value.
func (r *Registry) Parse(text string) (*Bound, error) {
	s, err := ParseSpec(text)
	if err != nil {
		return nil, err
	}
	return r.Bind(s)
}

// Bind builds the fault a parsed spec names.
func (r *Registry) Bind(s Spec) (*Bound, error) {
	k, ok := r.kinds[s.Name]
	if !ok {
		return nil, &SpecError{Spec: s.String(), Part: s.Name, Why: "unknown fault (known: " + strings.Join(r.Names(), ", ") + ")"}
	}
	for _, p := range s.Params {
		if isSelectorKey(p.Key) {
			continue
		}
		i := slices.IndexFunc(k.Params, func(d ParamDoc) bool { return d.Key == p.Key })
		if i < 0 {
			return nil, &SpecError{Spec: s.String(), Part: p.Key, Why: "unknown parameter of " + s.Name + knownParams(k)}
		}
		d := k.Params[i]
		for _, x := range d.Excludes {
			if _, ok := s.Get(x); ok {
				return nil, &SpecError{Spec: s.String(), Part: p.Key + " and " + x, Why: "give one, not both (" + p.Key + ": " + d.Doc + ")"}
			}
		}
	}
	ps := &Params{spec: s}
	sel := parseSelector(ps)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	if err := checkRevision(s, &k, sel.Revision); err != nil {
		return nil, err
	}
	f, err := k.New(ps)
	if err == nil {
		err = ps.Err()
	}
	if err != nil {
		var se *SpecError
		if !asSpecError(err, &se) {
			err = &SpecError{Spec: s.String(), Why: err.Error()}
		}
		return nil, err
	}
	return &Bound{Spec: s, Kind: &k, Selector: sel, Fault: f}, nil
}

func knownParams(k Kind) string {
	keys := slices.Clone(selectorKeys)
	for _, p := range k.Params {
		keys = append(keys, p.Key)
	}
	return " (known: " + strings.Join(keys, ", ") + ")"
}

func asSpecError(err error, target **SpecError) bool {
	se, ok := err.(*SpecError)
	if ok {
		*target = se
	}
	return ok
}

// ParseAll reads several specs, in order.
func (r *Registry) ParseAll(texts []string) ([]*Bound, error) {
	out := make([]*Bound, 0, len(texts))
	for _, t := range texts {
		b, err := r.Parse(t)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
