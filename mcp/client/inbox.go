package client

import (
	"context"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// inbox is where the reader goroutine leaves messages for one waiter: the
// answers to a request (SEP-1905 streaming sends several with one id, so a
// waiter receives 0..N messages, not one) or the notifications of one task.
// It never blocks the reader: the queue grows as needed. A failed inbox
// still hands out what was queued before the failure. T is *mcp.Message
// for answers, taskNote for a task's notifications.
type inbox[T any] struct {
	mu     sync.Mutex
	queue  []T
	err    error
	signal chan struct{} // holds a token while the queue is non-empty or err is set
}

func newInbox[T any]() *inbox[T] { return &inbox[T]{signal: make(chan struct{}, 1)} }

// taskNote is a notification of a task: a partial's params come decoded
// (nil when they did not decode: the call records why).
type taskNote struct {
	msg     *mcp.Message
	partial *mcp.TaskPartialParams
}

func (b *inbox[T]) notify() {
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

// push queues a message; after fail it is dropped.
func (b *inbox[T]) push(m T) {
	b.mu.Lock()
	if b.err == nil {
		b.queue = append(b.queue, m)
	}
	b.mu.Unlock()
	b.notify()
}

// fail ends the inbox with err; the first error wins.
func (b *inbox[T]) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.notify()
}

// take returns the queued messages and the error, if the inbox failed.
func (b *inbox[T]) take() ([]T, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q, b.err
}

// next waits for one message.
func (b *inbox[T]) next(ctx context.Context) (T, error) {
	var zero T
	for {
		b.mu.Lock()
		if len(b.queue) > 0 {
			m := b.queue[0]
			b.queue = b.queue[1:]
			more := len(b.queue) > 0
			b.mu.Unlock()
			if more {
				b.notify()
			}
			return m, nil
		}
		err := b.err
		b.mu.Unlock()
		if err != nil {
			b.notify()
			return zero, err
		}
		select {
		case <-b.signal:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// ready is the channel to select on; after it fires, call take.
func (b *inbox[T]) ready() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.signal
}

// empty reports whether nothing is queued.
func (b *inbox[T]) empty() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) == 0
}
