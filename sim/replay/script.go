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
	s := &script{header: src.Header()}
	reqAt := map[uint64]int{} // exchange -> index of its request step
	var batch map[uint64][][]byte
	for rec, err := range src.Records() {
		if err != nil {
			var t *traces.TruncatedError
			if errors.As(err, &t) {
				s.cut = err.Error()
				break
			}
			return nil, err
		}
		if !rec.Side.InView(view) {
			continue
		}
		switch {
		case rec.Kind == traces.KindRequestHead && rec.HTTP != nil:
			s.http = true
			reqAt[rec.Exchange] = len(s.steps)
			s.steps = append(s.steps, step{kind: stepRequest, rec: rec, ch: rec.Exchange})
		case rec.Dir == traces.DirClientToServer && strings.HasPrefix(rec.Stream, "req:"):
			i, ok := reqAt[rec.Exchange]
			if !ok {
				continue
			}
			switch rec.Kind {
			case traces.KindMessage:
				if rec.Batch > 0 {
					if batch == nil {
						batch = map[uint64][][]byte{}
					}
					batch[rec.Exchange] = append(batch[rec.Exchange], rec.Raw)
					s.steps[i].body = joinBatch(batch[rec.Exchange])
					continue
				}
				s.steps[i].body = append(s.steps[i].body, rec.Raw...)
			case traces.KindBodyChunk:
				s.steps[i].body = append(s.steps[i].body, rec.Raw...)
			}
		case rec.Kind == traces.KindResponseHead && rec.HTTP != nil:
			s.steps = append(s.steps, step{kind: stepHead, rec: rec, ch: rec.Exchange})
		case rec.Exchange != 0 && rec.Dir == traces.DirServerToClient && (rec.Kind == traces.KindSSEEvent || rec.Kind == traces.KindMessage):
			s.steps = append(s.steps, step{kind: stepItem, rec: rec, ch: rec.Exchange})
		case rec.Exchange != 0 && rec.Dir == traces.DirServerToClient && rec.Kind == traces.KindBodyEnd:
			// A body that ended otherwise than at its end is followed by
			// the conn-error that says who cut it.
			if rec.End == traces.EndEOF {
				s.steps = append(s.steps, step{kind: stepEnd, rec: rec, ch: rec.Exchange})
			}
		case rec.Exchange != 0 && rec.Kind == traces.KindConnError && rec.End == traces.EndClient:
			s.steps = append(s.steps, step{kind: stepCut, rec: rec, ch: rec.Exchange})
		case rec.Exchange != 0 && rec.Kind == traces.KindConnError:
			// Cut by the server or on the way: the live stream is expected
			// to end there too, however it ends.
			s.steps = append(s.steps, step{kind: stepEnd, rec: rec, ch: rec.Exchange})
		case rec.Exchange == 0 && (rec.Kind == traces.KindStdioLine || rec.Kind == traces.KindMessage) && rec.Stream != "stderr":
			switch rec.Dir {
			case traces.DirClientToServer:
				s.steps = append(s.steps, step{kind: stepSend, rec: rec, ch: rec.Conn, body: rec.Raw})
			case traces.DirServerToClient:
				s.steps = append(s.steps, step{kind: stepItem, rec: rec, ch: rec.Conn})
			}
		}
	}
	if s.http {
		// Drop what an HTTP trace's stdio records would add: none are
		// expected, but a mixed trace replays its HTTP half only.
		kept := s.steps[:0]
		for _, st := range s.steps {
			if st.kind != stepSend && (st.kind != stepItem || st.rec.Exchange != 0) {
				kept = append(kept, st)
			}
		}
		s.steps = kept
	}
	sends := 0
	for _, st := range s.steps {
		if st.kind == stepRequest || st.kind == stepSend {
			sends++
		}
	}
	if sends == 0 {
		return nil, fmt.Errorf("%w: the trace has no HTTP request and no client message", ErrNotReplayable)
	}
	return s, nil
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
