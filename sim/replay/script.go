package replay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/traces"
)

// ErrNotReplayable is the error of a trace that holds nothing a replay
// can send: no HTTP request and no client message.
var ErrNotReplayable = errors.New("nothing to replay")

// stepKind says what one step of a replay script does.
type stepKind uint8

const (
	stepRequest stepKind = iota + 1 // HTTP: send a request (head and body)
	stepHead                        // HTTP: expect the response head of an exchange
	stepItem                        // expect the next message (SSE event, JSON body, line) of a channel
	stepEnd                         // expect the channel to end: the server closed it
	stepCut                         // the recorded client cut the channel: cut the live one
	stepSend                        // stdio: send one line
)

// step is one thing the recorded conversation did, in trace order.
type step struct {
	kind stepKind
	rec  traces.Record // the record it comes from (the request head for stepRequest)
	// ch is the channel: the recorded exchange id over HTTP, the
	// connection (one server process) over stdio.
	ch uint64
	// body is a request's body (stepRequest) or a line to send (stepSend).
	body []byte
}

// script is a trace cut into the client's steps and the server's answers.
type script struct {
	header traces.Header
	http   bool
	steps  []step
	// cut is set when the trace was cut short (its writer was killed):
	// the script holds the steps up to its last whole record.
	cut string
}

// loadScript reads the client's view of a trace (the wire's and the
// client side's records, docs/trace-format.md) into a script. A trace
// with HTTP exchanges replays over HTTP; one with stdio lines or
// in-process messages ("conn") over stdio.
func loadScript(src *traces.Reader) (*script, error) { return loadView(src, traces.SideClient) }

// loadView is loadScript from the view of one end (traces.SideClient or
// traces.SideServer): a client replay serves what the server sent, before
// any fault acted, so that the faults act again.
func loadView(src *traces.Reader, view traces.Side) (*script, error) {
	b := scriptBuilder{s: &script{header: src.Header()}, reqAt: map[uint64]int{}}
	for rec, err := range src.Records() {
		if err != nil {
			var t *traces.TruncatedError
			if errors.As(err, &t) {
				b.s.cut = err.Error()
				break
			}
			return nil, err
		}
		if rec.Side.InView(view) {
			b.add(rec)
		}
	}
	s := b.s
	if s.http {
		s.dropStdio()
	}
	if s.sends() == 0 {
		return nil, fmt.Errorf("%w: the trace has no HTTP request and no client message", ErrNotReplayable)
	}
	return s, nil
}

// scriptBuilder cuts records into a script's steps, one record at a time.
type scriptBuilder struct {
	s     *script
	reqAt map[uint64]int // exchange -> index of its request step
	batch map[uint64][][]byte
}

func (b *scriptBuilder) push(kind stepKind, rec traces.Record, ch uint64) {
	b.s.steps = append(b.s.steps, step{kind: kind, rec: rec, ch: ch})
}

// add places one record of the view: an HTTP request and its body, a
// response head, what the server sent on an exchange, a stdio line.
func (b *scriptBuilder) add(rec traces.Record) {
	switch {
	case rec.Kind == traces.KindRequestHead && rec.HTTP != nil:
		b.s.http = true
		b.reqAt[rec.Exchange] = len(b.s.steps)
		b.push(stepRequest, rec, rec.Exchange)
	case rec.Dir == traces.DirClientToServer && strings.HasPrefix(rec.Stream, "req:"):
		b.requestBody(rec)
	case rec.Kind == traces.KindResponseHead && rec.HTTP != nil:
		b.push(stepHead, rec, rec.Exchange)
	case rec.Exchange != 0:
		if kind, ok := exchangeStep(rec); ok {
			b.push(kind, rec, rec.Exchange)
		}
	case (rec.Kind == traces.KindStdioLine || rec.Kind == traces.KindMessage) && rec.Stream != "stderr":
		b.stdioLine(rec)
	}
}

// requestBody adds a request body's message or chunk to its request
// step; the messages of a batch are joined into one array.
func (b *scriptBuilder) requestBody(rec traces.Record) {
	i, ok := b.reqAt[rec.Exchange]
	if !ok {
		return
	}
	st := &b.s.steps[i]
	switch {
	case rec.Kind == traces.KindMessage && rec.Batch > 0:
		if b.batch == nil {
			b.batch = map[uint64][][]byte{}
		}
		b.batch[rec.Exchange] = append(b.batch[rec.Exchange], rec.Raw)
		st.body = joinBatch(b.batch[rec.Exchange])
	case rec.Kind == traces.KindMessage, rec.Kind == traces.KindBodyChunk:
		st.body = append(st.body, rec.Raw...)
	}
}

// exchangeStep is the step of a record an HTTP exchange carries besides
// its heads and its request body, if it makes one.
func exchangeStep(rec traces.Record) (stepKind, bool) {
	switch {
	case rec.Dir == traces.DirServerToClient && (rec.Kind == traces.KindSSEEvent || rec.Kind == traces.KindMessage):
		return stepItem, true
	case rec.Dir == traces.DirServerToClient && rec.Kind == traces.KindBodyEnd:
		// A body that ended otherwise than at its end is followed by
		// the conn-error that says who cut it.
		return stepEnd, rec.End == traces.EndEOF
	case rec.Kind == traces.KindConnError && rec.End == traces.EndClient:
		return stepCut, true
	case rec.Kind == traces.KindConnError:
		// Cut by the server or on the way: the live stream is expected
		// to end there too, however it ends.
		return stepEnd, true
	}
	return 0, false
}

// stdioLine adds a line (or in-process message) of a connection: one to
// send, or one to expect.
func (b *scriptBuilder) stdioLine(rec traces.Record) {
	switch rec.Dir {
	case traces.DirClientToServer:
		b.s.steps = append(b.s.steps, step{kind: stepSend, rec: rec, ch: rec.Conn, body: rec.Raw})
	case traces.DirServerToClient:
		b.push(stepItem, rec, rec.Conn)
	}
}

// dropStdio drops what an HTTP trace's stdio records would add: none are
// expected, but a mixed trace replays its HTTP half only.
func (s *script) dropStdio() {
	kept := s.steps[:0]
	for _, st := range s.steps {
		if st.kind != stepSend && (st.kind != stepItem || st.rec.Exchange != 0) {
			kept = append(kept, st)
		}
	}
	s.steps = kept
}

// sends counts the steps that send: HTTP requests and stdio lines.
func (s *script) sends() int {
	n := 0
	for _, st := range s.steps {
		if st.kind == stepRequest || st.kind == stepSend {
			n++
		}
	}
	return n
}

func joinBatch(elems [][]byte) []byte {
	b := []byte{'['}
	for i, e := range elems {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}

// Speed is how fast a replay sends: 0 as fast as the answers allow
// ("max"), otherwise a factor on the recorded pace (1 as recorded, 4
// four times faster).
type Speed float64

// ParseSpeed reads "max", "1", "4", "0.5" or "x4".
func ParseSpeed(s string) (Speed, error) {
	if s == "max" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(s, "x"), 64)
	if err != nil || !(f > 0 && f <= 1e6) {
		return 0, fmt.Errorf("speed %q: want max or a positive factor (1 as recorded, 4 four times faster)", s)
	}
	return Speed(f), nil
}

func (s Speed) String() string {
	if s == 0 {
		return "max"
	}
	return "x" + strconv.FormatFloat(float64(s), 'g', -1, 64)
}

// due is when, after the replay started, a step recorded at offset (from
// the first step's offset first) is sent: offset/speed, or at once for
// max. A pure function, so pacing is tested without a clock.
func (s Speed) due(offset, first time.Duration) time.Duration {
	if s == 0 || offset <= first {
		return 0
	}
	return time.Duration(float64(offset-first) / float64(s))
}
