package check

import (
	"time"
)

// session is one client's conversation: an Mcp-Session-Id over HTTP, a
// connection over stdio or in process.
type session struct {
	id   string
	http bool
	// broadcast: the server sent one message on two of the session's
	// streams (HTTP-NO-BROADCAST failed).
	broadcast bool
	// assigned: the server gave the id out (an initialize answer carried
	// it), so HTTP-SESSION applies.
	assigned bool
	// sawInit: the trace saw the initialize request, so what the client
	// declared is known.
	sawInit       bool
	clientPartial bool
	clientModes   []string
	serverModes   []string
	serverPartial bool
	deleted       bool
	// idsCollide: an event id came on two streams (HTTP-EVENT-ID-UNIQUE
	// failed), so ids no longer tell streams apart.
	idsCollide bool
	deletedRec uint64

	requests map[string]*request
	// eventIDs maps an SSE event id to the stream that first carried it.
	eventIDs map[string]*stream
	// gets counts GET streams, for fault stream names.
	gets       int
	cutStreams []*stream
	// resumes are the GETs that resumed a stream, by the root stream.
	resumes map[*stream][]*stream
	// carriers counts the streams that carried a response or a partial.
	carriers int
}

func newSession(id string) *session {
	return &session{id: id, http: true, requests: map[string]*request{}, eventIDs: map[string]*stream{}, resumes: map[*stream][]*stream{}}
}

// exchange is one HTTP request and its answer; over stdio one stands for
// the whole connection.
type exchange struct {
	conn, id       uint64
	rec            uint64
	offset         time.Duration
	method         string // POST, GET, DELETE, STDIO
	sessionID      string
	sess           *session
	lastEventID    string
	hasLastEventID bool
	origin, host   string
	status         int
	contentType    string
	// rpcID and rpcMethod are the request a POST carries; onlyNotes marks
	// a POST of notifications and responses only.
	rpcID, rpcMethod string
	requests         int
	notes            int
	stream           *stream
}

// stream is the server's side of an exchange: a JSON body or an SSE
// stream, or over stdio the server's output.
type stream struct {
	name   string
	ex     *exchange
	sess   *session
	kind   string // POST, GET, STDIO
	rpcID  string
	method string
	// resumes is the stream a GET with Last-Event-ID resumes.
	resumes *stream
	status  int

	lastEventID  string
	lastEventRec uint64
	retry        time.Duration
	hasRetry     bool
	cut          bool
	cutRec       uint64
	cutAt        time.Duration
	// cutByServer: the server ended the body (EOF) before the response,
	// rather than the client, the network or the recorder.
	cutByServer bool
	// events are the SSE event ids a stream and its resumptions carried
	// first, in order (kept on the root stream), for HTTP-RESUME-COMPLETE.
	events []eventSeen
	// due are, on a resumption, the events of its chain recorded after
	// its Last-Event-ID: what the replay must carry; next is how many of
	// them it carried so far.
	due   []eventSeen
	next  int
	final bool // the request's final response arrived on it
	// carries: the stream carried a response or a partial.
	carries bool
	// resumedBy is what resumed the stream after it was cut: a GET with
	// Last-Event-ID or a tasks/result with lastSeqNr.
	resumedBy     any
	tasksCreated  []*task
	terminalTasks map[string]uint64 // task id -> record of its terminal status on this stream
}

// root returns the stream a chain of resumptions began with.
func (s *stream) root() *stream {
	for s.resumes != nil {
		s = s.resumes
	}
	return s
}

// request is one JSON-RPC request of the client.
type request struct {
	id, method string
	rec        uint64
	at         time.Duration
	ex         *exchange
	taskID     string
	// lastSeqNr of tasks/result: hasLastSeqNr, its raw text and value.
	hasLastSeqNr bool
	lastSeqNrRaw string
	lastSeqNr    int64
	lastSeqNrOK  bool
	modes        []string
	taskAug      bool
	// taskTerminalBefore: the client had seen the task terminal when it
	// sent this request (its status, and the record).
	terminalBefore    string
	terminalBeforeRec uint64
	knownBefore       bool // the task id had been given out before
	otherSession      *session
	// Responses: complete marks SEP-1905's isComplete: true; maxSeq the
	// highest seqNr in its answers; answered any response.
	answered  bool
	complete  bool
	completeR uint64
	seqs      []int64
	mode      string
	task      *task
	// modeDue: the first answer was task mode where both sides declare
	// this higher mode; judged by finishModes unless a later response
	// to the request shows that mode after all.
	modeDue    string
	modeDueRec uint64
	// whole: a tasks/result answered with the rest of its task's result:
	// without lastSeqNr, the whole result; with it, up to isComplete: true.
	whole bool
}

// seqFinding is a partial notification whose seq was not the one due.
type seqFinding struct {
	faulted bool
	msg     string
	rec     uint64
}

// task is what the history shows of one task.
type task struct {
	id        string
	sess      *session
	createdBy *request
	rec       uint64
	// status: the last status the client saw, and when.
	status     string
	statusRec  uint64
	terminalAt uint64
	// segments: the text of each seqNr seen (segmentBlock gives its block).
	segments   map[int64]string
	segRecs    map[int64]uint64
	maxSeqNr   int64
	isComplete bool
	isError    bool
	// nextSeq is the SEP-2679 seq expected next.
	nextSeq int64
	// earlySeq: the seq expected next in each session, before the
	// answer that creates the task names its owner.
	earlySeq   map[string]int64
	seqStarted bool
	// seqRoots: the streams (by their root) that carried the task's
	// partials; seqWrong: S2679-SEQ's findings, judged at the end, when
	// it is known whether the order of these streams was proven.
	seqRoots  map[*stream]bool
	seqWrong  []seqFinding
	cancelled bool // a tasks/cancel was sent
	// creatorCut: the stream that created the task broke while it ran.
	creatorCut    bool
	creatorCutRec uint64
	pollInterval  time.Duration
	lastGet       time.Duration
	lastGetRec    uint64
	hasGet        bool
	result        string // canonical content of a tasks/result answer
	resultRec     uint64
	// received: seqNrs the client received, for CLIENT-RESUME.
	received map[int64]bool
	// completedRec is 1 + the record where the task was first seen
	// completed, from any source; completedOn is the stream it came on.
	completedRec uint64
	completedOn  *stream
	// completeRec is 1 + the record of the first response with
	// isComplete: true for the task.
	completeRec uint64
	// unowned are the messages about the task seen before its creation,
	// each in its session: a leak unless that session creates it.
	unowned []sighting
}

// eventSeen is one SSE event id and the record that first carried it.
type eventSeen struct {
	id  string
	rec uint64
}

func newTask(id string, s *session, rec uint64) *task {
	return &task{id: id, sess: s, rec: rec, segments: map[int64]string{}, segRecs: map[int64]uint64{}, received: map[int64]bool{}}
}

// contiguous returns the highest n such that segments 1..n were received.
func (t *task) contiguous() int64 {
	var n int64
	for t.received[n+1] {
		n++
	}
	return n
}
