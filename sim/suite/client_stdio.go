package suite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/recorder"
	"github.com/tasksim/tasksim/traces"
)

// serveStdioScripted serves ep, the scripted server, over stdio to every
// relay that connects (relay.go), one session per relay, recording
// into p what passes as stdio-line records (stdin: client to server,
// recorded before the server reads it; stdout: server to client, recorded
// before it is sent), and misbehaving on the lines of answers as mb says.
// stop closes the listener and the connections and returns once every
// session ended. What the misbehaviour did is counted into acts.
func serveStdioScripted(ctx context.Context, ep mcp.Endpoint, mb Misbehavior, acts *misbehaviorActs, p *recorder.Pipeline) (spec string, stop func(), err error) {
	l, err := listenRelay()
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var conns atomic.Uint64
	var dropped atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.serve(func(c net.Conn, r *bufio.Reader) {
			id := conns.Add(1)
			p.Add(traces.Record{Conn: id, Kind: traces.KindConnOpen, Note: "stdio client, through the relay from " + c.RemoteAddr().String()})
			in := &lineRecorder{p: p, conn: id}
			out := &scriptedLines{w: c, mb: mb, acts: acts, dropped: &dropped, rec: lineRecorder{p: p, conn: id, stream: "stdout", dir: traces.DirServerToClient}}
			in.stream, in.dir = "stdin", traces.DirClientToServer
			err := stdio.Serve(ctx, ep, &recordingReader{r: r, rec: in}, out, nil)
			kind, note := traces.KindConnClose, "the client closed its side"
			if err != nil {
				kind, note = traces.KindConnError, err.Error()
			}
			p.Add(traces.Record{Conn: id, Kind: kind, Note: note})
		})
	}()
	return l.Spec(), func() { cancel(); l.Close(); <-done }, nil
}

// lineRecorder records whole lines of one stream as stdio-line records.
type lineRecorder struct {
	p      *recorder.Pipeline
	conn   uint64
	stream string
	dir    traces.Direction
	part   []byte
}

// lines records the lines b completes and keeps the rest.
func (l *lineRecorder) lines(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.part = append(l.part, b...)
			return
		}
		l.record(append(l.part, b[:i]...))
		l.part, b = nil, b[i+1:]
	}
}

func (l *lineRecorder) record(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	l.p.Add(traces.Record{Conn: l.conn, Stream: l.stream, Dir: l.dir, Kind: traces.KindStdioLine, Raw: bytes.Clone(line)})
}

// recordingReader is the scripted server's stdin: a line is recorded
// before the server can read its end, so no answer precedes its request.
type recordingReader struct {
	r   *bufio.Reader
	rec *lineRecorder
}

func (r *recordingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.rec.lines(b[:n])
	return n, err
}

// scriptedLines is the scripted server's stdout: it takes whole lines,
// drops or repeats the lines of answers carrying segments as mb says,
// records each line it sends and sends it.
type scriptedLines struct {
	w       net.Conn
	mb      Misbehavior
	acts    *misbehaviorActs
	dropped *atomic.Bool // the DropSeqNr line was dropped (once per scenario)

	mu   sync.Mutex
	rec  lineRecorder
	part []byte
}

func (s *scriptedLines) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = append(s.part, b...)
	for {
		i := bytes.IndexByte(s.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := bytes.Clone(s.part[:i])
		s.part = s.part[i+1:]
		if err := s.line(line); err != nil {
			return 0, err
		}
	}
}

// line passes one whole line on, or not, or twice.
func (s *scriptedLines) line(line []byte) error {
	var seqs []int64
	if m, err := mcp.DecodeMessage(line); err == nil && m.Kind() == mcp.KindResponse {
		seqs = seqNrs(m)
	}
	if len(seqs) > 0 {
		s.acts.segmentEvents.Add(1)
	}
	if s.mb.DropSeqNr > 0 && containsInt(seqs, s.mb.DropSeqNr) && s.dropped.CompareAndSwap(false, true) {
		s.acts.dropped.Add(1)
		return nil
	}
	n := 1
	if s.mb.Duplicate && len(seqs) > 0 {
		n = 2
		s.acts.duplicated.Add(1)
	}
	for range n {
		s.rec.record(line)
		if _, err := s.w.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("stdio: write to the relay: %w", err)
		}
	}
	return nil
}
