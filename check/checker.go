package check

import (
	"cmp"
	"errors"
	"hash/maphash"
	"iter"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// Options configure a Checker.
type Options struct {
	// Rules limits the verdict to these rule IDs; empty means every rule.
	Rules []string
	// SendOrder says the recorder saw every message the server sent in
	// the order the server sent them, across all the streams of a
	// session: a recorder inside the server, at the point where it hands
	// a message to a stream (a trace labelled order=send, LabelOrder).
	// Rules then judge the order of two messages on two streams from the
	// record order. A proxy, which sees each connection pass on its own,
	// does not.
	SendOrder bool
	// Merged says each connection's records merge several streams in
	// the order they arrived (an in-process run over Streamable HTTP):
	// two messages on one recorded stream are then in no proven order.
	Merged bool
	// Skip makes these rules SKIP, whatever the trace shows, with what
	// they would need (worded as Rule.Needs): for a recording that cannot
	// show what they judge (an in-process connection that merged a
	// session's HTTP streams into one shows no order of messages on one
	// of them).
	Skip map[string]string
	// Revision is the revision of the records that name none (a trace
	// header's Protocol, docs/trace-format.md, "Revisions"); "" means
	// Revision20251125, the revision of every trace written before
	// records named theirs.
	Revision string
}

// Checker judges one history, record by record. It keeps what is open:
// sessions, their streams and requests, and tasks.
type Checker struct {
	opts    Options
	results map[string]*RuleResult
	records uint64
	faults  int

	exchanges map[exKey]*exchange
	sessions  map[string]*session
	tasks     map[string]*task
	taskIDs   []taskIDSeen
	// faultedStreams and faultedTasks are what faults acted on; faultAll
	// is set when a fault record names no message.
	faultedStreams map[string]bool
	faultedTasks   map[string]bool
	faultAll       bool
	// messages remembers which stream first carried a response or a
	// partial notification, for HTTP-NO-BROADCAST.
	messages map[msgKey]seenMsg
	seed     maphash.Seed

	// split is set once a record of the client's or the server's side
	// came: c is then the server's view and client, when the verdict
	// has client rules, the client's (views.go).
	split  bool
	client *Checker

	// rev26 is the history of the 2026-07-28 records (rev2026.go);
	// revisions counts the records of each revision that carry a message
	// or an HTTP head, for the reason a rule of a revision the trace does
	// not hold is skipped.
	rev26     *rev26
	revisions map[string]int
}

type msgKey struct {
	sess string
	hash uint64
}

type exKey struct{ conn, ex uint64 }

type taskIDSeen struct {
	id  string
	rec uint64
}

type seenMsg struct {
	stream *stream
	rec    uint64
}

// New returns a Checker.
func New(opts *Options) *Checker {
	c := &Checker{
		results:        map[string]*RuleResult{},
		exchanges:      map[exKey]*exchange{},
		sessions:       map[string]*session{},
		tasks:          map[string]*task{},
		faultedStreams: map[string]bool{},
		faultedTasks:   map[string]bool{},
		messages:       map[msgKey]seenMsg{},
		seed:           maphash.MakeSeed(),
		rev26:          newRev26(),
		revisions:      map[string]int{},
	}
	if opts != nil {
		c.opts = *opts
	}
	for _, r := range catalog {
		if len(c.opts.Rules) > 0 && !slices.Contains(c.opts.Rules, r.ID) {
			continue
		}
		c.results[r.ID] = &RuleResult{Rule: r}
	}
	return c
}

// Check judges every record of seq. A cut trace (its last record
// incomplete) is judged up to its last whole record and the verdict says
// so; any other read error is returned.
func Check(seq iter.Seq2[traces.Record, error], opts *Options) (*Verdict, error) {
	c := New(opts)
	for rec, err := range seq {
		if err != nil {
			if errors.Is(err, traces.ErrTruncated) {
				v := c.Verdict()
				v.Cut = err.Error()
				return v, nil
			}
			return nil, err
		}
		c.Add(rec)
	}
	return c.Verdict(), nil
}

// ok records a judged observation of rule id that held.
func (c *Checker) ok(id RuleID) {
	if r := c.results[id.String()]; r != nil {
		r.Checked++
	}
}

// excused records an observation a fault made, not held against anyone.
func (c *Checker) excused(id RuleID) {
	if r := c.results[id.String()]; r != nil {
		r.Excused++
	}
}

// fail records a violation of rule id with its evidence.
func (c *Checker) fail(id RuleID, msg string, records ...uint64) {
	r := c.results[id.String()]
	if r == nil {
		return
	}
	r.Checked++
	r.Failures++
	if len(r.Findings) < maxFindings {
		r.Findings = append(r.Findings, Finding{Records: records, Message: msg})
	}
}

// judge is ok or fail by cond.
func (c *Checker) judge(id RuleID, cond bool, msg string, records ...uint64) {
	if cond {
		c.ok(id)
	} else {
		c.fail(id, msg, records...)
	}
}

// revisionOf returns the revision of rec: its own, else the default.
func (c *Checker) revisionOf(rec traces.Record) string {
	switch {
	case rec.Revision != "":
		return rec.Revision
	case c.opts.Revision != "":
		return c.opts.Revision
	}
	return Revision20251125
}

// otherRevision says why rule r saw nothing when the trace holds no
// record of its revision but some of another: "" otherwise.
func (c *Checker) otherRevision(r Rule) string {
	if c.revisions[r.Revision] > 0 {
		return ""
	}
	var held []string
	for rev, n := range c.revisions {
		if n > 0 {
			held = append(held, rev)
		}
	}
	if len(held) == 0 {
		return ""
	}
	slices.Sort(held)
	return " (a rule of " + r.Revision + "; the trace holds only " + strings.Join(held, ", ") + " records)"
}

// Verdict ends the history (rules that wait for something that never came
// are judged now) and returns the verdict, rules in catalog order.
func (c *Checker) Verdict() *Verdict {
	c.finish()
	if c.client != nil {
		c.client.finish()
	}
	v := &Verdict{Records: c.records, Faults: c.faults, Sides: c.split}
	for _, r := range catalog {
		res := c.viewOf(r).results[r.ID]
		if res == nil {
			continue
		}
		out := *res
		if why, ok := c.opts.Skip[r.ID]; ok {
			v.Rules = append(v.Rules, RuleResult{Rule: r, Status: Skip, Why: why})
			continue
		}
		switch {
		case out.Failures > 0:
			out.Status = r.Breach(false)
		case out.Checked > 0:
			out.Status = Pass
		default:
			out.Status = Skip
			out.Why = r.Needs + c.viewOf(r).otherRevision(r)
			if out.Excused > 0 {
				out.Why += " (every observation was made by a fault)"
			}
		}
		v.Rules = append(v.Rules, out)
	}
	return v
}

// Add judges one record in the views it belongs to (views.go). Records
// must come in trace order.
func (c *Checker) Add(rec traces.Record) {
	c.records++
	c.route(rec)
}

// add judges one record in c's history: a record of 2026-07-28 by the
// rules of that revision (rev2026.go), any other by those of 2025-11-25.
// Fault records are of no revision: what a fault acted on excuses either.
func (c *Checker) add(rec traces.Record) {
	if rec.Kind != traces.KindFault {
		r := c.revisionOf(rec)
		if rec.RPC != nil || rec.HTTP != nil {
			c.revisions[r]++
		}
		if r == Revision20260728 {
			c.add26(rec)
			return
		}
	}
	switch rec.Kind {
	case traces.KindFault:
		c.addFault(rec)
	case traces.KindRequestHead:
		c.requestHead(rec)
	case traces.KindResponseHead:
		c.responseHead(rec)
	case traces.KindSSEEvent:
		c.sseEvent(rec)
	case traces.KindMessage, traces.KindStdioLine:
		if rec.RPC != nil {
			c.message(rec, rec.Raw)
		}
	case traces.KindBodyEnd:
		if rec.Dir == traces.DirServerToClient && rec.End != traces.EndStopped && (rec.End != traces.EndEOF || c.postStreamOpen(rec)) {
			// Also a POST stream the server ended before its response:
			// the client must resume it (Transports, "Sending Messages
			// to the Server": the server MAY close the connection).
			c.streamCut(rec)
		}
	case traces.KindConnError:
		// A stream the recorder cut on its own stop is the end of the
		// record, not a cut either peer made: nobody is to resume it.
		if rec.End != traces.EndStopped {
			c.streamCut(rec)
		}
	}
}

// addFault notes what a fault acted on. A structured fault names its
// stream and task; a fault of free text only excuses everything.
func (c *Checker) addFault(rec traces.Record) {
	c.faults++
	stream, task := faultTarget(rec)
	if stream == "" && task == "" {
		c.faultAll = true
		return
	}
	if strings.HasPrefix(stream, "stdout:") || strings.HasPrefix(stream, "stdin:") {
		// An in-process fault layer names logical streams of one
		// connection (faults.ConnOptions.Split); the checker knows the
		// connection's output as one stream.
		stream = "stdout"
	}
	// The fault layer names its streams itself ("post:s1/7": the stream
	// answering request 7; "get:s1/2": a GET stream; "stdout"): a POST
	// stream is matched by its request id, GET streams and stdio as a whole.
	switch kind, rest, _ := strings.Cut(stream, ":"); {
	case kind == "post":
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			c.faultedStreams["post:"+rest[i+1:]] = true
		}
	case kind == "get":
		c.faultedStreams["get"] = true
	case stream != "":
		c.faultedStreams[stream] = true
	}
	if f := rec.Fault; f != nil && f.Target.RPCID != "" {
		c.faultedStreams["post:"+strings.Trim(f.Target.RPCID, `"`)] = true
	}
	if task != "" {
		c.faultedTasks[task] = true
	}
}

// faultTarget reads the stream and task a fault record names. (The
// trace reader gives version 1 faults, which were text, their structured
// field.)
func faultTarget(rec traces.Record) (stream, task string) {
	if f := rec.Fault; f != nil {
		return f.Target.Stream, f.Target.TaskID
	}
	return "", ""
}

// faulted reports whether a fault acted on stream s or task t.
func (c *Checker) faulted(s *stream, taskID string) bool {
	if c.faultAll {
		return true
	}
	if taskID != "" && c.faultedTasks[taskID] {
		return true
	}
	for ; s != nil; s = s.resumes {
		switch s.kind {
		case "POST":
			if c.faultedStreams["post:"+strings.Trim(s.rpcID, `"`)] {
				return true
			}
		case "GET":
			if c.faultedStreams["get"] {
				return true
			}
		default:
			if c.faultedStreams["stdout"] || c.faultedStreams["stdin"] {
				return true
			}
		}
	}
	return false
}

func headerValue(h *traces.HTTPHead, name string) string {
	if h == nil {
		return ""
	}
	for _, f := range h.Header {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

func (c *Checker) requestHead(rec traces.Record) {
	ex := &exchange{conn: rec.Conn, id: rec.Exchange, rec: rec.Index, offset: rec.Offset}
	if h := rec.HTTP; h != nil {
		ex.method = h.Method
		// One pass over the header; the first field of a name counts.
		var seen [4]bool
		for _, f := range h.Header {
			var i int
			var v *string
			switch {
			case strings.EqualFold(f.Name, "Mcp-Session-Id"):
				i, v = 0, &ex.sessionID
			case strings.EqualFold(f.Name, "Last-Event-ID"):
				i, v = 1, &ex.lastEventID
				ex.hasLastEventID = true
			case strings.EqualFold(f.Name, "Origin"):
				i, v = 2, &ex.origin
			case strings.EqualFold(f.Name, "Host"):
				i, v = 3, &ex.host
			default:
				continue
			}
			if !seen[i] {
				seen[i], *v = true, f.Value
			}
		}
	}
	if ex.sessionID != "" {
		ex.sess = c.session(ex.sessionID)
	} else {
		ex.sess = newSession("")
	}
	c.exchanges[exKey{rec.Conn, rec.Exchange}] = ex
	if ex.method == "GET" {
		c.openGet(ex, rec)
	}
}

// exchangeOf returns the exchange of rec, or for records without one (stdio,
// in-process) a stand-in per connection.
func (c *Checker) exchangeOf(rec traces.Record) *exchange {
	k := exKey{rec.Conn, rec.Exchange}
	if ex := c.exchanges[k]; ex != nil {
		return ex
	}
	if rec.Exchange != 0 {
		return nil
	}
	ex := &exchange{conn: rec.Conn, rec: rec.Index, method: "STDIO"}
	ex.sess = c.session("conn:" + strconv.FormatUint(rec.Conn, 10))
	ex.sess.http = false
	c.exchanges[k] = ex
	return ex
}

// task returns the task with id, registering it in session s at its first
// sight.
func (c *Checker) task(s *session, id string, rec traces.Record) *task {
	t := c.tasks[id]
	if t == nil {
		t = newTask(id, s, rec.Index)
		c.tasks[id] = t
		c.taskIDs = append(c.taskIDs, taskIDSeen{id, rec.Index})
	}
	return t
}

func (c *Checker) session(id string) *session {
	s := c.sessions[id]
	if s == nil {
		s = newSession(id)
		c.sessions[id] = s
	}
	return s
}

func (c *Checker) responseHead(rec traces.Record) {
	ex := c.exchanges[exKey{rec.Conn, rec.Exchange}]
	if ex == nil || rec.HTTP == nil {
		return
	}
	ex.status = rec.HTTP.Status
	ex.contentType = headerValue(rec.HTTP, "Content-Type")
	if id := headerValue(rec.HTTP, "Mcp-Session-Id"); id != "" && ex.sessionID == "" {
		// The session begins: the provisional session of the initialize
		// exchange becomes the server's.
		if old := c.sessions[id]; old == nil {
			ex.sess.id = id
			c.sessions[id] = ex.sess
		} else {
			ex.sess = old
		}
		ex.sess.assigned = true
		ex.sessionID = id
	}
	c.checkOrigin(ex, rec)
	c.checkSessionStatus(ex, rec)
	if ex.stream != nil {
		ex.stream.status = ex.status
	}
}

func (c *Checker) sseEvent(rec traces.Record) {
	ex := c.exchangeOf(rec)
	if ex == nil {
		return
	}
	st := c.streamOf(ex, rec)
	if rec.SSE != nil {
		if rec.SSE.HasRetry {
			st.retry = rec.SSE.Retry
			st.hasRetry = true
		}
		if rec.SSE.HasID && rec.SSE.ID != "" && c.eventID(st, rec) {
			// A replay of an event judged when it first came: its
			// message is not the server's second sending.
			return
		}
	}
	if rec.RPC != nil && rec.SSE != nil {
		c.message(rec, []byte(rec.SSE.Data))
	}
}

// streamOf returns the stream a server record belongs to.
func (c *Checker) streamOf(ex *exchange, rec traces.Record) *stream {
	if ex.stream == nil {
		ex.stream = &stream{name: rec.Stream, ex: ex, sess: ex.sess, rpcID: ex.rpcID, method: ex.rpcMethod, kind: ex.method}
		if ex.method == "STDIO" {
			ex.stream.name = "stdout"
		}
	}
	return ex.stream
}

func (c *Checker) streamCut(rec traces.Record) {
	ex := c.exchangeOf(rec)
	if ex == nil || ex.stream == nil {
		return
	}
	st := ex.stream
	if st.cut || st.final {
		return
	}
	st.cut = true
	st.cutByServer = rec.Kind == traces.KindBodyEnd && rec.Note == "eof"
	st.cutRec = rec.Index
	st.cutAt = rec.Offset
	if st.kind == "POST" && !st.final {
		ex.sess.cutStreams = append(ex.sess.cutStreams, st)
	}
	for _, t := range st.tasksCreated {
		t.creatorCut = true
		t.creatorCutRec = rec.Index
	}
}

// message handles one JSON-RPC message, from either side.
func (c *Checker) message(rec traces.Record, raw []byte) {
	ex := c.exchangeOf(rec)
	if ex == nil {
		return
	}
	w := decodeWire(raw)
	if w == nil {
		return
	}
	if rec.Dir == traces.DirClientToServer {
		c.clientMessage(ex, rec, w)
		return
	}
	st := c.streamOf(ex, rec)
	c.serverMessage(ex, st, rec, w, raw)
}

// finish judges what waits for the end of the history.
func (c *Checker) finish() {
	for _, s := range c.sessions {
		c.finishSession(s)
	}
	ts := slices.Collect(maps.Values(c.tasks))
	slices.SortFunc(ts, func(a, b *task) int { return cmp.Compare(a.rec, b.rec) })
	for _, t := range ts {
		c.finishSeq(t)
	}
	c.finishComplete()
	c.finishModes()
	c.checkIDEntropy(RuleTaskIDEntropy, c.taskIDs)
	c.checkIDEntropy(RuleS2663IDEntropy, c.rev26.ids)
	c.finishClients()
}

// ttlOf reads a ttl in milliseconds.
func ttlOf(raw []byte) (time.Duration, bool) {
	n, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n * float64(time.Millisecond)), true
}

// originHost returns the host of an Origin header, "" if it has none.
func originHost(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// postStreamOpen reports whether rec ends an SSE answer to a POST before
// its response, after events with ids: a stream the client can resume.
func (c *Checker) postStreamOpen(rec traces.Record) bool {
	ex := c.exchangeOf(rec)
	return ex != nil && ex.stream != nil && ex.stream.kind == "POST" && !ex.stream.final && ex.stream.lastEventID != ""
}
