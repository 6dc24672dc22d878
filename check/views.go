package check

import (
	"maps"
	"slices"

	"github.com/tasksim/tasksim/traces"
)

// A trace made with a fault layer between the client and the server may
// hold both sides of it (docs/trace-format.md, "Whose view"): each
// message once as the server sent or received it (side server) and once
// as the client did (side client), the fault records between. One history
// over both would see every message twice, and a message the layer
// dropped on one side only. So the Checker keeps two views once the trace
// shows a side:
//
//	records ──▶ Add ──┬─ wire, faults ─▶ server's view ◀─ side server    server and transport rules
//	                  └─ wire, faults ─▶ client's view ◀─ side client    client rules
//
// While every record is on the wire (a trace of record, a proxy, any
// version 1 file) the two views are one, and the Checker keeps one
// history: such a trace is judged as before sides existed. At the first
// record of a side the client's view begins as a copy of that history
// (split), and from then on each record goes to the views it belongs to.

// route gives rec to the views it belongs to: a fault record and a wire
// record to both, a side's record to its side's view. A record of a side
// that is neither the client's nor the server's is in no view.
func (c *Checker) route(rec traces.Record) {
	side := rec.Side
	if rec.Kind == traces.KindFault {
		side = traces.SideWire
	}
	if !c.split && (side == traces.SideClient || side == traces.SideServer) {
		c.split = true
		if c.wantsClient() {
			c.client = c.clone()
		}
	}
	switch side {
	case traces.SideWire:
		c.add(rec)
		if c.client != nil {
			c.client.add(rec)
		}
	case traces.SideServer:
		c.add(rec)
	case traces.SideClient:
		if c.client != nil {
			c.client.add(rec)
		}
	}
}

// wantsClient reports whether the verdict has a client rule to judge.
func (c *Checker) wantsClient() bool {
	for id := range c.results {
		if r, _ := RuleByID(id); r.Side == Client {
			return true
		}
	}
	return false
}

// viewOf returns the view whose results judge rule r.
func (c *Checker) viewOf(r Rule) *Checker {
	if r.Side == Client && c.client != nil {
		return c.client
	}
	return c
}

// cloner copies a history: every session, exchange, stream, request and
// task once, the pointers between them mapped to the copies.
type cloner struct {
	sessions  map[*session]*session
	exchanges map[*exchange]*exchange
	streams   map[*stream]*stream
	requests  map[*request]*request
	tasks     map[*task]*task
}

// clone returns a Checker with a copy of c's history and results, sharing
// no mutable state with c.
func (c *Checker) clone() *Checker {
	k := &cloner{
		sessions:  map[*session]*session{},
		exchanges: map[*exchange]*exchange{},
		streams:   map[*stream]*stream{},
		requests:  map[*request]*request{},
		tasks:     map[*task]*task{},
	}
	d := &Checker{
		opts:           c.opts,
		results:        make(map[string]*RuleResult, len(c.results)),
		records:        c.records,
		faults:         c.faults,
		exchanges:      make(map[exKey]*exchange, len(c.exchanges)),
		sessions:       make(map[string]*session, len(c.sessions)),
		tasks:          make(map[string]*task, len(c.tasks)),
		taskIDs:        slices.Clone(c.taskIDs),
		faultedStreams: maps.Clone(c.faultedStreams),
		faultedTasks:   maps.Clone(c.faultedTasks),
		faultAll:       c.faultAll,
		messages:       make(map[msgKey]seenMsg, len(c.messages)),
		seed:           c.seed,
		split:          c.split,
		rev26:          c.rev26.clone(),
		revisions:      maps.Clone(c.revisions),
	}
	for id, r := range c.results {
		cp := *r
		cp.Findings = slices.Clone(r.Findings)
		d.results[id] = &cp
	}
	for key, ex := range c.exchanges {
		d.exchanges[key] = k.exchange(ex)
	}
	for id, s := range c.sessions {
		d.sessions[id] = k.session(s)
	}
	for id, t := range c.tasks {
		d.tasks[id] = k.task(t)
	}
	for key, m := range c.messages {
		d.messages[key] = seenMsg{stream: k.stream(m.stream), rec: m.rec}
	}
	if c.client != nil {
		// A history already split keeps its client's view.
		d.client = c.client.clone()
	}
	return d
}

// copyOnce returns the copy of p in m, made at its first sight by copying
// *p and letting fill map what it points to; nil stays nil.
func copyOnce[T any](m map[*T]*T, p *T, fill func(d *T)) *T {
	if p == nil {
		return nil
	}
	if d := m[p]; d != nil {
		return d
	}
	d := new(T)
	*d = *p
	m[p] = d
	fill(d)
	return d
}

func (k *cloner) session(s *session) *session {
	return copyOnce(k.sessions, s, func(d *session) {
		d.clientModes = slices.Clone(s.clientModes)
		d.serverModes = slices.Clone(s.serverModes)
		d.requests = make(map[string]*request, len(s.requests))
		for id, r := range s.requests {
			d.requests[id] = k.request(r)
		}
		d.eventIDs = make(map[string]*stream, len(s.eventIDs))
		for id, st := range s.eventIDs {
			d.eventIDs[id] = k.stream(st)
		}
		d.cutStreams = copyAll(s.cutStreams, k.stream)
		d.resumes = make(map[*stream][]*stream, len(s.resumes))
		for root, sts := range s.resumes {
			d.resumes[k.stream(root)] = copyAll(sts, k.stream)
		}
	})
}

func (k *cloner) exchange(ex *exchange) *exchange {
	return copyOnce(k.exchanges, ex, func(d *exchange) {
		d.sess = k.session(ex.sess)
		d.stream = k.stream(ex.stream)
	})
}

func (k *cloner) stream(st *stream) *stream {
	return copyOnce(k.streams, st, func(d *stream) {
		d.ex = k.exchange(st.ex)
		d.sess = k.session(st.sess)
		d.resumes = k.stream(st.resumes)
		switch by := st.resumedBy.(type) {
		case *stream:
			d.resumedBy = k.stream(by)
		case *request:
			d.resumedBy = k.request(by)
		}
		d.tasksCreated = copyAll(st.tasksCreated, k.task)
		d.terminalTasks = maps.Clone(st.terminalTasks)
		d.events = slices.Clone(st.events)
		d.due = slices.Clone(st.due)
	})
}

// copyAll returns a list of the copies of xs; nil stays nil.
func copyAll[T any](xs []*T, copyOf func(*T) *T) []*T {
	if xs == nil {
		return nil
	}
	out := make([]*T, len(xs))
	for i, x := range xs {
		out[i] = copyOf(x)
	}
	return out
}

func (k *cloner) request(r *request) *request {
	return copyOnce(k.requests, r, func(d *request) {
		d.ex = k.exchange(r.ex)
		d.otherSession = k.session(r.otherSession)
		d.task = k.task(r.task)
		d.seqs = slices.Clone(r.seqs)
		d.modes = slices.Clone(r.modes)
	})
}

func (k *cloner) task(t *task) *task {
	return copyOnce(k.tasks, t, func(d *task) {
		d.sess = k.session(t.sess)
		d.createdBy = k.request(t.createdBy)
		d.segments = maps.Clone(t.segments)
		d.segRecs = maps.Clone(t.segRecs)
		d.received = maps.Clone(t.received)
		d.earlySeq = maps.Clone(t.earlySeq)
		d.seqWrong = slices.Clone(t.seqWrong)
		d.seqRoots = nil
		for st := range t.seqRoots {
			if d.seqRoots == nil {
				d.seqRoots = map[*stream]bool{}
			}
			d.seqRoots[k.stream(st)] = true
		}
		d.completedOn = k.stream(t.completedOn)
		d.unowned = nil
		for _, l := range t.unowned {
			d.unowned = append(d.unowned, sighting{k.session(l.sess), l.rec, l.what})
		}
	})
}
