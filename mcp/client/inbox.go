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
// still hands out what was queued before the failure.
type inbox struct {
	mu     sync.Mutex
	queue  []*mcp.Message
	err    error
	signal chan struct{} // holds a token while the queue is non-empty or err is set
}

func newInbox() *inbox { return &inbox{signal: make(chan struct{}, 1)} }

func (b *inbox) notify() {
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

// push queues a message; after fail it is dropped.
func (b *inbox) push(m *mcp.Message) {
	b.mu.Lock()
	if b.err == nil {
		b.queue = append(b.queue, m)
	}
	b.mu.Unlock()
	b.notify()
}

// fail ends the inbox with err; the first error wins.
func (b *inbox) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.notify()
}

// take returns the queued messages and the error, if the inbox failed.
func (b *inbox) take() ([]*mcp.Message, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q, b.err
}

// next waits for one message.
func (b *inbox) next(ctx context.Context) (*mcp.Message, error) {
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
			return nil, err
		}
		select {
		case <-b.signal:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ready is the channel to select on; after it fires, call take.
func (b *inbox) ready() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.signal
}
