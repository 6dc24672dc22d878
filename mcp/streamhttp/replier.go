package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tasksim/tasksim/mcp"
)

// replyState is where the answer to one POSTed request stands.
type replyState uint8

const (
	replyPending replyState = iota // nothing yet; the POST handler waits
	replyJSON                      // the first message was final: one JSON body
	replyNone                      // cancelled before any message: 202, no body
	replyStream                    // an SSE stream was opened
	replyOrphan                    // the POST went away first; replies are dropped
)

// replier is the mcp.Replier of one request. The first Reply decides the
// shape of the HTTP answer (2025-11-25 Transports, "Sending Messages to the
// Server": the server returns either application/json or
// text/event-stream): a final message first becomes a JSON body, anything
// else opens a logical stream, which the POST handler then serves as SSE.
// From then on replies append to the stream whatever becomes of the HTTP
// connection, so a client that disconnected can resume.
//
// Locking: mu guards the fields below it. Reply holds it while appending to
// the stream, which keeps replies in order and the final one last.
type replier struct {
	sess *session
	// ready gets a value when state leaves replyPending; capacity 1.
	ready chan struct{}
	// initSession marks the initialize request that created sess.
	initSession bool

	mu       sync.Mutex
	state    replyState
	final    bool    // the final Reply was accepted
	body     []byte  // replyJSON: the encoded message
	isError  bool    // the final message is a JSON-RPC error
	st       *stream // replyStream
	httpGone bool    // the POST handler returned
}

var errNilReply = errors.New("streamhttp: Reply with a nil message must be final")

// encodeReply checks a Reply's arguments and encodes its message; a nil
// message (final) encodes as nil.
func encodeReply(msg *mcp.Message, final bool) ([]byte, error) {
	if msg == nil {
		if !final {
			return nil, errNilReply
		}
		return nil, nil
	}
	data, err := msg.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("streamhttp: encode reply: %w", err)
	}
	return data, nil
}

func newReplier(s *session, initSession bool) *replier {
	return &replier{sess: s, ready: make(chan struct{}, 1), initSession: initSession}
}

// Reply implements mcp.Replier. It never waits for the network and does
// not fail because the client went away; it fails after the final reply
// (mcp.ErrReplied) and once the session has ended (ErrSessionClosed).
func (p *replier) Reply(_ context.Context, msg *mcp.Message, final bool) error {
	data, err := encodeReply(msg, final)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final {
		return mcp.ErrReplied
	}
	switch p.state {
	case replyOrphan:
		p.final = final
		return nil
	case replyPending:
		if final {
			p.final = true
			if msg == nil {
				p.state = replyNone
			} else {
				p.state, p.body, p.isError = replyJSON, data, msg.Error != nil
			}
			p.signal()
			return nil
		}
		st, err := p.sess.openStream()
		if err != nil {
			return err
		}
		p.state, p.st = replyStream, st
		p.signal()
	}
	if err := p.st.appendMessage(data, final); err != nil {
		return err
	}
	if final {
		p.final = true
		if msg != nil && msg.Error != nil {
			p.isError = true
			if p.initSession && p.httpGone {
				// The initialize failed after its POST stream was left: the
				// POST handler cannot discard the session any more.
				go p.sess.h.endSession(p.sess)
			}
		}
	}
	return nil
}

// CloseConnection implements mcp.ConnectionCloser: the connection carrying
// the answer ends after a retry field, the stream goes on, and the client
// resumes with GET and Last-Event-ID (2025-11-25 Transports, "Sending
// Messages to the Server": the server MAY close the connection without
// terminating the SSE stream). Before any reply, it opens the stream first,
// so that the client gets the priming event's id to resume from.
func (p *replier) CloseConnection() {
	p.mu.Lock()
	var st *stream
	switch p.state {
	case replyPending:
		var err error
		if st, err = p.sess.openStream(); err != nil {
			p.mu.Unlock()
			return
		}
		p.state, p.st = replyStream, st
		p.signal()
	case replyStream:
		st = p.st
	}
	p.mu.Unlock()
	if st != nil {
		st.closeConnection()
	}
}

func (p *replier) signal() {
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

var _ mcp.ConnectionCloser = (*replier)(nil)
