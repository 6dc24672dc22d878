package replay

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// liveItem is one message the live server sent on a channel: an SSE
// event (with or without data), a JSON body's message, a stdout line.
type liveItem struct {
	sse   bool
	id    string
	hasID bool
	data  []byte // the JSON-RPC text (an SSE event's data)
}

// liveChan is what the live server sent on one channel (an HTTP
// exchange, or stdio's stdout), as it arrives; the script reads it in
// order.
type liveChan struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	status  int           // HTTP: the response status, 0 until the head came
	header  http.Header
	items   []liveItem
	ended   bool
	endErr  error // why the channel ended, nil for a clean end
	next    int   // items the script has matched
	cancel  context.CancelFunc
}

func newLiveChan() *liveChan { return &liveChan{changed: make(chan struct{})} }

func (c *liveChan) update(f func()) {
	c.mu.Lock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

func (c *liveChan) push(it liveItem) { c.update(func() { c.items = append(c.items, it) }) }

func (c *liveChan) end(err error) {
	c.update(func() {
		if !c.ended {
			c.ended, c.endErr = true, err
		}
	})
}

// await waits until ready (called with c.mu held) holds, ctx ends, or
// wait passes; it reports whether ready held.
func (c *liveChan) await(ctx context.Context, wait time.Duration, ready func() bool) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		c.mu.Lock()
		ok := ready()
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// nextItem waits for the channel's next unmatched item. It returns the
// item, or ok false with the channel's end (ended) or nothing in time.
func (c *liveChan) nextItem(ctx context.Context, wait time.Duration) (it liveItem, ok, ended bool, endErr error) {
	c.await(ctx, wait, func() bool { return c.next < len(c.items) || c.ended })
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next < len(c.items) {
		it = c.items[c.next]
		c.next++
		return it, true, false, nil
	}
	return liveItem{}, false, c.ended, c.endErr
}

// json reports whether the channel's answer is a JSON body.
func (c *liveChan) json() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.header != nil && mediaKind(c.header.Get("Content-Type")) == "json"
}

// unread gives back the item nextItem returned last.
func (c *liveChan) unread() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.next > 0 {
		c.next--
	}
}

// parseBlock reads the fields of one SSE block as the recorder does: the
// last id, the data lines joined by LF.
func parseBlock(block []byte) liveItem {
	it := liveItem{sse: true}
	var data [][]byte
	hasData := false
	for _, line := range bytes.FieldsFunc(block, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				it.id, it.hasID = string(value), true
			}
		case "data":
			hasData = true
			data = append(data, value)
		}
	}
	if hasData {
		it.data = bytes.Join(data, []byte("\n"))
	}
	return it
}

func statusText(code int) string {
	if code == 0 {
		return "no response"
	}
	return "HTTP " + strconv.Itoa(code)
}
