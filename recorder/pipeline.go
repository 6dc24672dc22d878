package recorder

import (
	"runtime"
	"sync"
	"time"
)

// settle is how long the pipeline, woken from idle, leaves the CPU to the
// goroutines delivering the bytes that woke it before it records them. On
// a busy machine recording at once competes with the client reading the
// very event just passed; a short wait moves that work out of its way,
// and times are taken when the bytes passed, not when they are recorded.
const settle = 300 * time.Microsecond

// pipeline runs the recording work of a Proxy on a goroutine of its own,
// in the order it was handed over. The goroutines that pass bytes to the
// client only copy them and hand them over; parsing SSE events, describing
// JSON-RPC messages and encoding records happen here, off their path, and
// yield to them: the goroutine waits settle after an idle spell and lets
// other goroutines run between two pieces of work.
//
// It holds at most max bytes of work; a push that would pass that waits
// for room, so a stream that outruns the recording for long is slowed to
// its pace rather than filling memory.
type pipeline struct {
	max int

	mu      sync.Mutex
	room    sync.Cond // signalled when work is done
	items   []work
	spare   []work
	pending int // bytes handed over and not yet recorded
	started bool
	closed  bool
	wake    chan struct{} // one token: there is work, or the pipeline closed
	done    chan struct{} // closed when the goroutine ends
}

type work struct {
	size int
	run  func()
}

func newPipeline(max int) *pipeline {
	q := &pipeline{max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	q.room.L = &q.mu
	return q
}

// push hands run over, counting size bytes. Work pushed after close is
// dropped.
func (q *pipeline) push(size int, run func()) {
	q.mu.Lock()
	for q.pending > 0 && q.pending+size > q.max && !q.closed {
		q.room.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return
	}
	if !q.started {
		q.started = true
		go q.loop()
	}
	q.items = append(q.items, work{size, run})
	q.pending += size
	q.mu.Unlock()
	q.signal()
}

func (q *pipeline) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *pipeline) loop() {
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
			time.Sleep(settle)
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
func (q *pipeline) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}

// close lets the work already pushed finish and waits for it.
func (q *pipeline) close() {
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
