package faults

import (
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/traces"
)

// Set is the faults of one run with the run's seed: places ask it what to
// do with each message, and it keeps every decision it took, in order.
// It is safe for concurrent use.
type Set struct {
	seed   uint64
	faults []*Bound

	stopped  atomic.Bool
	oversize atomic.Int64

	mu      sync.Mutex
	fired   []int64
	applied []Applied
	observe func(Applied)
}

// Applied is one decision: a fault acted on a message.
type Applied struct {
	// Seq numbers decisions in the order they were taken, from 1.
	Seq uint64
	// Fault is the index of the fault in the set; Spec its text form.
	Fault int
	Spec  string
	Name  string
	// spec is the parsed spec, for the trace record's parameters.
	spec Spec
	// Target is the message acted on; Action what was done.
	Target Target
	Action Action
}

// NewSet returns the faults bound to seed.
func NewSet(seed uint64, faults ...*Bound) *Set {
	return &Set{seed: seed, faults: faults, fired: make([]int64, len(faults))}
}

// Seed returns the run's seed.
func (s *Set) Seed() uint64 { return s.seed }

// Specs returns the set's faults in their text form, in order.
func (s *Set) Specs() []string {
	out := make([]string, len(s.faults))
	for i, b := range s.faults {
		out[i] = b.Spec.String()
	}
	return out
}

// Observe sets a function called with every decision as it is taken (to
// write it into a trace); it must not block.
func (s *Set) Observe(f func(Applied)) {
	s.mu.Lock()
	s.observe = f
	s.mu.Unlock()
}

// Decide returns what the set's faults do to m, in fault order; none when
// every fault lets it pass. Each decision is drawn from the seed, the
// fault's index and m's identity: the same message in another run with the
// same seed gets the same decision (a count= limit depends on the order
// messages arrive in, where several streams run at once).
func (s *Set) Decide(m *Msg) []Applied {
	if s == nil || len(s.faults) == 0 || s.stopped.Load() {
		return nil
	}
	var out []Applied
	var id uint64
	for i, b := range s.faults {
		if !b.Selector.matches(m) || !b.takes(m) {
			continue
		}
		if id == 0 {
			h := fnv.New64a()
			h.Write([]byte(m.identity()))
			id = h.Sum64() | 1
		}
		r := rand.New(rand.NewPCG(s.seed, id^(uint64(i+1)*0x9e3779b97f4a7c15)))
		if b.Selector.P < 1 && r.Float64() >= b.Selector.P {
			continue
		}
		a, ok := b.Fault.Act(m, r)
		if !ok {
			continue
		}
		s.mu.Lock()
		if b.Selector.Count > 0 && s.fired[i] >= b.Selector.Count {
			s.mu.Unlock()
			continue
		}
		s.fired[i]++
		ap := Applied{Seq: uint64(len(s.applied) + 1), Fault: i, Spec: b.Spec.String(), Name: b.Spec.Name, spec: b.Spec, Target: m.Target(), Action: a}
		s.applied = append(s.applied, ap)
		obs := s.observe
		s.mu.Unlock()
		if obs != nil {
			obs(ap)
		}
		out = append(out, ap)
	}
	return out
}

// Oversize returns how many messages were too long to be taken whole and
// passed unchanged, unseen by the faults: an SSE event over sse.MaxBlock,
// a JSON body over HTTPOptions.MaxBody, a stdio line over
// stdio.DefaultMaxLine. A trace marks their bytes Oversize.
func (s *Set) Oversize() int64 {
	if s == nil {
		return 0
	}
	return s.oversize.Load()
}

// passOversize counts a message that passes unseen for its size.
func (s *Set) passOversize() {
	if s != nil {
		s.oversize.Add(1)
	}
}

// Stop ends the faults: from now on Decide lets every message pass. A
// simulation stops its faults to judge liveness: once the faults stop,
// every call must come to its end.
func (s *Set) Stop() { s.stopped.Store(true) }

// Applied returns every decision taken so far, in order.
func (s *Set) Applied() []Applied {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Applied(nil), s.applied...)
}

// Counts returns how often each fault fired, by its spec, in set order.
func (s *Set) Counts() []Count {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Count, len(s.faults))
	for i, b := range s.faults {
		out[i] = Count{Spec: b.Spec.String(), Fired: s.fired[i]}
	}
	return out
}

// Count is how often one fault fired.
type Count struct {
	Spec  string
	Fired int64
}

// TraceFault is the decision as a trace fault record's structured field.
func (a Applied) TraceFault() traces.Fault {
	spec := a.spec
	f := traces.Fault{Name: a.Name, Action: a.Action.String(), Verb: a.Action.Verb.Trace(), Status: a.Action.Status}
	if v := a.Action.Verb; v == Delay || v == Advance {
		f.Delay = a.Action.Delay
	}
	for _, p := range spec.Params {
		f.Params = append(f.Params, traces.Param{Key: p.Key, Value: p.Value})
	}
	t := a.Target
	f.Target = traces.Target{Stream: t.Stream, EventID: t.EventID, HasEventID: t.EventID != "", RPCID: t.RPCID, Method: t.Method, TaskID: t.TaskID, Seq: t.Seq, HasSeq: t.HasSeq}
	if len(t.SeqNrs) > 0 {
		f.Target.SeqNr, f.Target.HasSeqNr = t.SeqNrs[0], true
	}
	return f
}

// Record returns the decision as a trace record of kind fault.
func (a Applied) Record() traces.Record {
	f := a.TraceFault()
	return traces.Record{Kind: traces.KindFault, Fault: &f, Note: f.String()}
}
