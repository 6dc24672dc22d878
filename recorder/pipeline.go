package recorder

import (
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/traces"
)

// DefaultMaxPending is the default of PipelineOptions.MaxPending and
// ProxyOptions.MaxPending.
const DefaultMaxPending = 1 << 20

// proxySettle is the Settle a Proxy gives its pipeline: how long the
// pipeline, woken from idle, leaves the CPU to the goroutines delivering
// the bytes that woke it before it records them. On a busy machine
// recording at once competes with the client reading the very event just
// passed; a short wait moves that work out of its way. It changes when
// records reach the file, never what they say nor their order: times are
// taken when the bytes passed, and the order is the order of hand-over.
const proxySettle = 300 * time.Microsecond

// PipelineOptions configure a Pipeline. The zero value (or nil) gives
// every default.
type PipelineOptions struct {
	// Clock stamps the Wall of records added without one. nil means the
	// wall clock. Give the traces.Writer the same clock (WriterOptions.Now
	// = Clock.Now), so that offsets are measured on it too.
	Clock clock.Clock
	// MaxPending caps the bytes added and not yet written; an Add that
	// would pass it waits for room. 0 means DefaultMaxPending.
	MaxPending int
	// Settle is how long the pipeline's goroutine, woken from idle, waits
	// before it writes, leaving the CPU to the traffic (the Proxy uses
	// 300 µs). It is wall time on purpose, a matter of CPU scheduling: it
	// changes when records reach the file, never what they say nor their
	// order. 0, the default, waits not at all, so that in-process runs on
	// a simulated clock never wait on the wall clock.
	Settle time.Duration
	// Logger receives the first failure to write the trace; nil discards
	// it.
	Logger *slog.Logger
}

// Pipeline writes records to a traces.Writer on a goroutine of its own,
// in the order they were added, from any number of goroutines. It is how
// every recorder of a run (a Proxy, Conn decorators on both sides of a
// fault layer) and the fault layer itself put their records into one
// trace in the order things happened: a record added after another, by
// whatever goroutine, comes after it in the file.
//
//	Proxy ──┐
//	Conn ───┼── Add (ordered) ──▶ queue ──▶ goroutine ──▶ traces.Writer
//	faults ─┘   AddFault, Annotate
//
// A Pipeline must be the only writer of its Writer while it runs. It does
// not close the Writer: Close the Pipeline, then the Writer.
type Pipeline struct {
	w     *traces.Writer
	q     *queue
	clock clock.Clock
	log   *slog.Logger

	mu       sync.Mutex
	next     uint64 // the index the next record added will have, if numbered
	numbered bool   // false once work of unknown record count was queued
	recent   [recentSize]msgIndex
	nrecent  int // entries of recent used, as a ring

	failMu  sync.Mutex
	failure error // the first trace write error
}

// recentSize is how many messages a Pipeline remembers the record index
// of (IndexOf).
const recentSize = 256

type msgIndex struct {
	msg   *mcp.Message
	index uint64
}

// NewPipeline returns a Pipeline writing to w. Its goroutine starts with
// the first record.
func NewPipeline(w *traces.Writer, opts *PipelineOptions) *Pipeline {
	var o PipelineOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	p := &Pipeline{w: w, q: newQueue(o.MaxPending, o.Settle), clock: clock.Or(o.Clock), log: o.Logger, numbered: true}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.next = w.Written()
	return p
}

// Add queues r to be written after everything added before. A zero Wall
// is set from the pipeline's clock now. r's Raw (and what its pointers
// point to) must not change afterwards. It returns the index r will have
// in the trace, when the pipeline knows it: while every piece of work it
// was given was one record (not so behind a Proxy, whose SSE streams make
// as many records as they hold events), and no write failed. After Close,
// r is dropped and ok is false.
func (p *Pipeline) Add(r traces.Record) (index uint64, ok bool) {
	if r.Wall.IsZero() {
		r.Wall = p.clock.Now()
	}
	return p.add(r, nil)
}

// AddFault adds a fault record: kind fault, f, the connection, exchange
// and stream of f's target, and note (free text, may be empty). Its side
// is the wire's: a fault acts between the sides. It returns what Add
// returns.
func (p *Pipeline) AddFault(f traces.Fault, note string) (index uint64, ok bool) {
	return p.Add(traces.Record{
		Conn: f.Target.Conn, Exchange: f.Target.Exchange, Stream: f.Target.Stream,
		Kind: traces.KindFault, Fault: &f, Note: note,
	})
}

// Annotate adds an annotation record with note.
func (p *Pipeline) Annotate(note string) {
	p.Add(traces.Record{Kind: traces.KindAnnotation, Note: note})
}

// add queues a record and, if msg is not nil, remembers its index as
// msg's.
func (p *Pipeline) add(r traces.Record, msg *mcp.Message) (uint64, bool) {
	return p.addStamped(r, msg, nil)
}

// addStamped is add, with stamp (if not nil) run on r on the pipeline's
// goroutine just before r is written: for what is known only once the
// records before it were written (the revision of an HTTP exchange, from
// its request's message).
func (p *Pipeline) addStamped(r traces.Record, msg *mcp.Message, stamp func(*traces.Record)) (uint64, bool) {
	// The lock is held across the push so that numbering follows the
	// queue's order.
	p.mu.Lock()
	defer p.mu.Unlock()
	run := func() { p.write(r) }
	if stamp != nil {
		run = func() {
			stamp(&r)
			p.write(r)
		}
	}
	if !p.q.push(len(r.Raw)+recordOverhead, run) {
		return 0, false
	}
	index, ok := p.next, p.numbered && p.Err() == nil
	p.next++
	if ok && msg != nil {
		p.recent[p.nrecent%recentSize] = msgIndex{msg, index}
		p.nrecent++
	}
	return index, ok
}

// later queues work that writes any number of records (the Proxy's SSE
// tee); indexes are unknown from then on.
func (p *Pipeline) later(size int, run func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.q.push(size+recordOverhead, run) {
		p.numbered = false
	}
}

// IndexOf returns the index of the latest record of msg (the same
// pointer) that a Conn decorator on this pipeline added, among the last
// few hundred messages, when known. A fault layer uses it to name, in its
// fault record, the record of the message it acts on: the message's
// record on the side it came from, which was added before the message
// reached the fault layer.
func (p *Pipeline) IndexOf(msg *mcp.Message) (uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := p.nrecent - 1; i >= 0 && i >= p.nrecent-recentSize; i-- {
		if e := p.recent[i%recentSize]; e.msg == msg {
			return e.index, true
		}
	}
	return 0, false
}

// recordOverhead is what a queued record counts beyond its Raw bytes.
const recordOverhead = 256

// Pending returns the bytes added and not yet written.
func (p *Pipeline) Pending() int { return p.q.Pending() }

// Sync waits until everything added before it is written and returns
// Err.
func (p *Pipeline) Sync() error {
	done := make(chan struct{})
	if p.q.push(0, func() { close(done) }) {
		<-done
	}
	return p.Err()
}

// write writes one record, on the pipeline's goroutine; the first failure
// is kept for Err and logged.
func (p *Pipeline) write(r traces.Record) {
	if err := p.w.Write(r); err != nil {
		p.failMu.Lock()
		first := p.failure == nil
		if first {
			p.failure = err
		}
		p.failMu.Unlock()
		if first {
			p.log.Error("recorder: writing the trace failed; later records are lost", "err", err)
		}
	}
}

// Err returns the first error writing the trace, if any.
func (p *Pipeline) Err() error {
	p.failMu.Lock()
	defer p.failMu.Unlock()
	return p.failure
}

// Close waits until everything added is written, stops the goroutine and
// returns Err. Records added afterwards are dropped. It does not close
// the Writer.
func (p *Pipeline) Close() error {
	p.q.close()
	return p.Err()
}

// queue runs work on a goroutine of its own, in the order it was handed
// over. The goroutines that pass bytes to the client only copy them and
// hand them over; parsing SSE events, describing JSON-RPC messages and
// encoding records happen here, off their path, and yield to them: the
// goroutine waits settle after an idle spell (if settle > 0) and lets
// other goroutines run between two pieces of work.
//
// It holds at most max bytes of work; a push that would pass that waits
// for room, so a stream that outruns the recording for long is slowed to
// its pace rather than filling memory.
type queue struct {
	max    int
	settle time.Duration

	mu      sync.Mutex
	room    sync.Cond // signalled when work is done
	items   []work
	spare   []work
	pending int // bytes handed over and not yet recorded
	started bool
	closed  bool
	wake    chan struct{} // one token: there is work, or the queue closed
	done    chan struct{} // closed when the goroutine ends
}

type work struct {
	size int
	run  func()
}

func newQueue(max int, settle time.Duration) *queue {
	q := &queue{max: max, settle: settle, wake: make(chan struct{}, 1), done: make(chan struct{})}
	q.room.L = &q.mu
	return q
}

// push hands run over, counting size bytes, and reports whether it did:
// work pushed after close is dropped.
func (q *queue) push(size int, run func()) bool {
	q.mu.Lock()
	for q.pending > 0 && q.pending+size > q.max && !q.closed {
		q.room.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if !q.started {
		q.started = true
		go q.loop()
	}
	q.items = append(q.items, work{size, run})
	q.pending += size
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *queue) loop() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.items) == 0 {
			if q.closed {
				q.mu.Unlock()
				return
			}
			q.mu.Unlock()
			<-q.wake
			if q.settle > 0 {
				time.Sleep(q.settle) // wall time on purpose: see PipelineOptions.Settle
			}
			q.mu.Lock()
		}
		batch := q.items
		q.items = q.spare[:0]
		q.mu.Unlock()

		n := 0
		for i := range batch {
			runtime.Gosched()
			batch[i].run()
			n += batch[i].size
			batch[i] = work{}
		}

		q.mu.Lock()
		q.spare = batch[:0]
		q.pending -= n
		q.room.Broadcast()
		q.mu.Unlock()
	}
}

// Pending returns the bytes handed over and not yet recorded.
func (q *queue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

// close lets the work already pushed finish and waits for it.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	started := q.started
	q.room.Broadcast()
	q.mu.Unlock()
	q.signal()
	if started {
		<-q.done
	}
}
