package traces

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrNoHTTP means a trace holds no HTTP exchange to export as HAR (a
// stdio trace, say).
var ErrNoHTTP = errors.New("no HTTP exchanges in the trace (HAR holds only HTTP; export stdio traces as jsonl)")

// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/). Fields that
// start with "_" are tasksim's, as the spec allows.
type harFile struct {
	Log harLog `json:"log"`
}

type harLog struct {
	Version string     `json:"version"`
	Creator harCreator `json:"creator"`
	Entries []harEntry `json:"entries"`
	Comment string     `json:"comment,omitempty"`
}

type harCreator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type harEntry struct {
	StartedDateTime string      `json:"startedDateTime"`
	Time            float64     `json:"time"`
	Request         harRequest  `json:"request"`
	Response        harResponse `json:"response"`
	Cache           struct{}    `json:"cache"`
	Timings         harTimings  `json:"timings"`
	Connection      string      `json:"connection,omitempty"`
	Exchange        uint64      `json:"_exchange"`
	Revision        string      `json:"_revision,omitempty"`
	ResultType      string      `json:"_resultType,omitempty"`
	Streams         []string    `json:"_streams,omitempty"`
	SSEEvents       []harSSE    `json:"_sseEvents,omitempty"`
	Error           string      `json:"_error,omitempty"`
}

type harNV struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harRequest struct {
	Method      string       `json:"method"`
	URL         string       `json:"url"`
	HTTPVersion string       `json:"httpVersion"`
	Cookies     []harNV      `json:"cookies"`
	Headers     []harNV      `json:"headers"`
	QueryString []harNV      `json:"queryString"`
	PostData    *harPostData `json:"postData,omitempty"`
	HeadersSize int          `json:"headersSize"`
	BodySize    int          `json:"bodySize"`
}

type harPostData struct {
	MimeType string  `json:"mimeType"`
	Text     string  `json:"text"`
	Params   []harNV `json:"params"`
	Encoding string  `json:"_encoding,omitempty"`
}

type harResponse struct {
	Status      int        `json:"status"`
	StatusText  string     `json:"statusText"`
	HTTPVersion string     `json:"httpVersion"`
	Cookies     []harNV    `json:"cookies"`
	Headers     []harNV    `json:"headers"`
	Content     harContent `json:"content"`
	RedirectURL string     `json:"redirectURL"`
	HeadersSize int        `json:"headersSize"`
	BodySize    int        `json:"bodySize"`
}

type harContent struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"encoding,omitempty"`
}

type harTimings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
	SSL     float64 `json:"ssl"`
}

// harSSE is one SSE event of a response; Time is milliseconds since the
// entry started.
type harSSE struct {
	Time       float64 `json:"time"`
	ID         *string `json:"id,omitempty"`
	Event      string  `json:"event,omitempty"`
	Data       string  `json:"data"`
	RetryMS    *int64  `json:"retry,omitempty"`
	Method     string  `json:"_method,omitempty"`
	TaskID     string  `json:"_taskId,omitempty"`
	ResultType string  `json:"_resultType,omitempty"`
}

// exchange gathers the records of one HTTP exchange.
type exchange struct {
	id                 uint64
	conn               uint64
	req, resp          *Record
	reqBody, respBody  []byte
	reqMsgs, respMsgs  []byte // message records, for bodies recorded only as messages
	reqEnd, end        time.Duration
	events             []Record
	streams            []string
	errNote            string
	hasReqBody, hasEnd bool
	// revision is the MCP revision of the exchange's first record that
	// names one; resultType that of the answer to its request.
	revision, resultType string
}

// WriteHAR writes the HTTP exchanges of src as a HAR 1.2 log: one entry
// per exchange with a request head, in the order of the requests. Bodies
// are the body chunks as recorded, else the JSON-RPC messages recorded
// from them, else (for an SSE response) the events' bytes: the event
// stream. "_sseEvents" lists the events with their times; "_revision"
// is the exchange's MCP revision, "_resultType" that of the answer to its
// request (MCP 2026-07-28). A trace without HTTP exchanges is ErrNoHTTP.
func WriteHAR(w io.Writer, h Header, src Source) error {
	byID := map[uint64]*exchange{}
	var order []*exchange
	for rec, err := range All(src) {
		if err != nil {
			return err
		}
		if rec.Exchange == 0 {
			continue
		}
		x := byID[rec.Exchange]
		if x == nil {
			x = &exchange{id: rec.Exchange}
			byID[rec.Exchange] = x
		}
		x.add(rec)
		if rec.Kind == KindRequestHead && x.req != nil && x.req.Index == rec.Index {
			order = append(order, x)
		}
	}
	if len(order) == 0 {
		return ErrNoHTTP
	}
	base := baseURL(h)
	log := harLog{Version: "1.2", Creator: harCreator{Name: "tasksim", Version: h.TasksimVersion}, Entries: []harEntry{}}
	if len(h.Command) > 0 {
		log.Comment = "recorded by: " + strings.Join(h.Command, " ")
	}
	for _, x := range order {
		log.Entries = append(log.Entries, x.entry(base))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(harFile{Log: log}); err != nil {
		return fmt.Errorf("write HAR: %w", err)
	}
	return nil
}

func (x *exchange) add(rec Record) {
	if rec.Stream != "" && !slices.Contains(x.streams, rec.Stream) {
		x.streams = append(x.streams, rec.Stream)
	}
	if x.conn == 0 {
		x.conn = rec.Conn
	}
	if x.revision == "" {
		x.revision = rec.Revision
	}
	if rpc := rec.RPC; x.resultType == "" && rec.Dir == DirServerToClient && rpc != nil && rpc.Type == "response" {
		x.resultType = rpc.ResultType
	}
	if !x.addRequest(rec) {
		x.addResponse(rec)
	}
}

// addRequest takes the request's head and what the client sent after it;
// it reports whether rec was one of them.
func (x *exchange) addRequest(rec Record) bool {
	switch {
	case rec.Kind == KindRequestHead && x.req == nil && rec.HTTP != nil:
		r := rec
		x.req = &r
		x.reqEnd = rec.Offset
	case rec.Dir != DirClientToServer:
		return false
	case rec.Kind == KindBodyChunk:
		x.reqBody = append(x.reqBody, rec.Raw...)
		x.hasReqBody = true
		x.reqEnd = max(x.reqEnd, rec.Offset)
	case rec.Kind == KindMessage:
		x.reqMsgs = append(x.reqMsgs, rec.Raw...)
		x.reqEnd = max(x.reqEnd, rec.Offset)
	case rec.Kind == KindBodyEnd:
		x.reqEnd = max(x.reqEnd, rec.Offset)
	default:
		return false
	}
	return true
}

// addResponse takes every other record: the response, its events, an
// error; what did not come from the client moves the exchange's end.
func (x *exchange) addResponse(rec Record) {
	switch {
	case rec.Kind == KindResponseHead && x.resp == nil && rec.HTTP != nil:
		r := rec
		x.resp = &r
	case rec.Kind == KindBodyChunk && rec.Dir == DirServerToClient:
		x.respBody = append(x.respBody, rec.Raw...)
	case rec.Kind == KindMessage && rec.Dir == DirServerToClient:
		x.respMsgs = append(x.respMsgs, rec.Raw...)
	case rec.Kind == KindSSEEvent:
		x.events = append(x.events, rec)
	case rec.Kind == KindConnError:
		x.errNote = rec.Note
	case rec.Kind == KindFault && x.errNote == "":
		x.errNote = "fault: " + strings.TrimSpace(rec.Fault.String()+" "+rec.Note)
	}
	if rec.Dir != DirClientToServer {
		x.end = max(x.end, rec.Offset)
		x.hasEnd = true
	}
}

func (x *exchange) entry(base string) harEntry {
	e := harEntry{
		StartedDateTime: x.req.Wall.UTC().Format(wallLayout),
		Exchange:        x.id,
		Revision:        x.revision,
		ResultType:      x.resultType,
		Streams:         x.streams,
		Error:           x.errNote,
		Timings:         harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1},
	}
	if x.conn != 0 {
		e.Connection = fmt.Sprint(x.conn)
	}
	e.Request = x.request(base)
	e.Response = x.response()
	e.SSEEvents = x.sseEvents()
	send, wait, receive := x.timings()
	e.Timings.Send, e.Timings.Wait, e.Timings.Receive = ms(send), ms(wait), ms(receive)
	e.Time = ms(send + wait + receive)
	return e
}

func (x *exchange) request(base string) harRequest {
	head := x.req.HTTP
	body := x.reqBody
	if !x.hasReqBody && len(x.reqMsgs) > 0 {
		body = x.reqMsgs
	}
	r := harRequest{Method: head.Method, HTTPVersion: head.Proto, Cookies: []harNV{},
		Headers: harHeaders(head), QueryString: []harNV{}, HeadersSize: -1, BodySize: len(body)}
	r.URL = absoluteURL(base, head)
	if u, err := url.Parse(r.URL); err == nil {
		for k, vs := range orderedQuery(u.RawQuery) {
			for _, v := range vs {
				r.QueryString = append(r.QueryString, harNV{k, v})
			}
		}
	}
	if len(body) > 0 || x.hasReqBody {
		text, enc := harText(body)
		ct, _ := head.Get("Content-Type")
		r.PostData = &harPostData{MimeType: ct, Text: text, Params: []harNV{}, Encoding: enc}
	}
	return r
}

func (x *exchange) response() harResponse {
	r := harResponse{Cookies: []harNV{}, Headers: []harNV{}, RedirectURL: "", HeadersSize: -1}
	ct := "application/octet-stream"
	if resp := x.resp; resp != nil {
		r.Status = resp.HTTP.Status
		r.StatusText = http.StatusText(resp.HTTP.Status)
		r.HTTPVersion = resp.HTTP.Proto
		r.Headers = harHeaders(resp.HTTP)
		if loc, ok := resp.HTTP.Get("Location"); ok {
			r.RedirectURL = loc
		}
		if v, ok := resp.HTTP.Get("Content-Type"); ok {
			ct = v
		}
	}
	body := x.responseBody()
	text, enc := harText(body)
	r.Content = harContent{Size: len(body), MimeType: ct, Text: text, Encoding: enc}
	r.BodySize = len(body)
	return r
}

// responseBody is the body as received, else the messages, else the SSE
// events written again.
func (x *exchange) responseBody() []byte {
	body := x.respBody
	if len(body) == 0 && len(x.events) == 0 {
		body = x.respMsgs
	}
	if len(body) == 0 {
		for _, ev := range x.events {
			if len(ev.Raw) > 0 {
				body = append(body, ev.Raw...)
			} else if ev.SSE != nil {
				body = appendSSE(body, ev.SSE)
			}
		}
	}
	return body
}

func (x *exchange) sseEvents() []harSSE {
	var out []harSSE
	for _, ev := range x.events {
		s := harSSE{Time: ms(ev.Offset - x.req.Offset)}
		if f := ev.SSE; f != nil {
			s.Event, s.Data = f.Event, f.Data
			if f.HasID {
				id := f.ID
				s.ID = &id
			}
			if f.HasRetry {
				r := f.Retry.Milliseconds()
				s.RetryMS = &r
			}
		} else {
			s.Data = string(ev.Raw)
		}
		if ev.RPC != nil {
			s.Method, s.TaskID, s.ResultType = ev.RPC.Method, ev.RPC.TaskID, ev.RPC.ResultType
		}
		out = append(out, s)
	}
	return out
}

// timings are HAR's send (the request), wait (until the response head)
// and receive (the rest).
func (x *exchange) timings() (send, wait, receive time.Duration) {
	end := x.reqEnd
	if x.hasEnd {
		end = max(end, x.end)
	}
	send = x.reqEnd - x.req.Offset
	if resp := x.resp; resp != nil {
		return send, max(resp.Offset-x.reqEnd, 0), max(end-resp.Offset, 0)
	}
	return send, max(end-x.reqEnd, 0), 0
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Round(time.Microsecond)/time.Microsecond) / 1000 }

func harHeaders(h *HTTPHead) []harNV {
	out := []harNV{}
	for _, f := range h.Header {
		out = append(out, harNV{f.Name, f.Value})
	}
	return out
}

// harText returns body as HAR text: itself when UTF-8, else base64.
func harText(b []byte) (text, encoding string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), "base64"
}

// baseURL is the scheme and host requests were made to, when the header
// says: a label "upstream" (the recorder's --upstream) or "server".
func baseURL(h Header) string {
	for _, l := range h.Labels {
		if l.Key == "upstream" || l.Key == "server" {
			if u, err := url.Parse(l.Value); err == nil && u.Scheme != "" && u.Host != "" {
				return u.Scheme + "://" + u.Host
			}
		}
	}
	return ""
}

// absoluteURL makes a request's URL absolute, as HAR wants: from its Host
// header, else the trace's base URL, else http://localhost.
func absoluteURL(base string, h *HTTPHead) string {
	if strings.HasPrefix(h.URL, "http://") || strings.HasPrefix(h.URL, "https://") {
		return h.URL
	}
	path := h.URL
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if host, ok := h.Get("Host"); ok && host != "" {
		scheme := "http"
		if strings.HasPrefix(base, "https://") {
			scheme = "https"
		}
		return scheme + "://" + host + path
	}
	if base != "" {
		return base + path
	}
	return "http://localhost" + path
}

// orderedQuery parses a query keeping the order of first appearance.
func orderedQuery(q string) func(func(string, []string) bool) {
	return func(yield func(string, []string) bool) {
		vals, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for part := range strings.SplitSeq(q, "&") {
			k, _, _ := strings.Cut(part, "=")
			k, err := url.QueryUnescape(k)
			if err != nil || seen[k] || vals[k] == nil {
				continue
			}
			seen[k] = true
			if !yield(k, vals[k]) {
				return
			}
		}
	}
}
