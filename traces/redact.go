package traces

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// RedactOptions say what a Redactor replaces, beyond the header fields it
// always replaces (AlwaysRedactedHeaders).
type RedactOptions struct {
	// Headers are more HTTP header names (case-insensitive) whose values
	// are secret.
	Headers []string
	// JSONPaths select values in JSON text: JSON-RPC messages, SSE data,
	// stdio lines, HTTP bodies. See docs/trace-format.md for the dialect
	// (params.arguments.apiKey, $..password, result.content[*].text).
	JSONPaths []string
	// Patterns are regular expressions (Go syntax) applied to all text. A
	// pattern with a capture group replaces only the first group's text
	// (`api_key=(\w+)`), otherwise the whole match.
	Patterns []string
	// Query are more URL query parameter names (case-insensitive) whose
	// values are secret.
	Query []string
}

// AlwaysRedactedHeaders returns the names of the HTTP header fields every
// Redactor redacts. The slice is the caller's to change.
func AlwaysRedactedHeaders() []string {
	return []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}
}

// AlwaysRedactedQuery returns the URL query parameters whose values every
// Redactor replaces in request URLs (a client that sends its credential as
// ?access_token=); the CLI keeps them out of an upstream URL it logs too.
// The slice is the caller's to change.
func AlwaysRedactedQuery() []string {
	return []string{"token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "key",
		"password", "passwd", "secret", "client_secret", "sig", "signature", "auth", "code"}
}

// RedactQuery returns rawQuery (a URL's query, without "?") with the value
// of every parameter named in names (case-insensitive) replaced by
// with(value). Parameters without "=" and all other bytes are kept as
// they are.
func RedactQuery(rawQuery string, names []string, with func(value string) string) string {
	if rawQuery == "" || len(names) == 0 {
		return rawQuery
	}
	parts := strings.Split(rawQuery, "&")
	changed := false
	for i, p := range parts {
		k, v, hasValue := strings.Cut(p, "=")
		if !hasValue || v == "" {
			continue
		}
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
			if nv := with(v); nv != v {
				parts[i], changed = k+"="+nv, true
			}
		}
	}
	if !changed {
		return rawQuery
	}
	return strings.Join(parts, "&")
}

// Redactor replaces secrets in records by tokens "[redacted:N]", numbered
// from 1 in order of first appearance. The same secret gets the same
// token throughout a trace (use one Redactor per trace), so a redacted
// trace still shows which requests carried the same credential. The
// tokens are not derived from the secrets: nothing in the trace can be
// used to guess them. A Redactor is safe for concurrent use; it holds the
// secrets it has seen in memory.
type Redactor struct {
	mu       sync.Mutex
	headers  map[string]bool // lower-case names
	query    []string        // query parameter names
	paths    []jsonPath
	patterns []*regexp.Regexp
	tokens   map[string]string
	n        int
}

var tokenRe = regexp.MustCompile(`\[redacted:([0-9]+)\]`)

// NewRedactor compiles o. Bad JSON paths and patterns are errors.
func NewRedactor(o RedactOptions) (*Redactor, error) {
	r := &Redactor{headers: map[string]bool{}, tokens: map[string]string{}}
	for _, h := range append(AlwaysRedactedHeaders(), o.Headers...) {
		h = strings.TrimSpace(h)
		if h == "" || strings.ContainsAny(h, ": \t\r\n") {
			return nil, fmt.Errorf("header name %q is not valid", h)
		}
		r.headers[strings.ToLower(h)] = true
	}
	r.query = AlwaysRedactedQuery()
	for _, q := range o.Query {
		if q = strings.TrimSpace(q); q == "" || strings.ContainsAny(q, "&=#? \t\r\n") {
			return nil, fmt.Errorf("query parameter name %q is not valid", q)
		}
		r.query = append(r.query, q)
	}
	for _, p := range o.JSONPaths {
		jp, err := compileJSONPath(p)
		if err != nil {
			return nil, err
		}
		r.paths = append(r.paths, jp)
	}
	for _, p := range o.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("pattern %q matches the empty string", p)
		}
		r.patterns = append(r.patterns, re)
	}
	return r, nil
}

// token returns the token of secret. Call with r.mu held.
func (r *Redactor) token(secret string) string {
	if t, ok := r.tokens[secret]; ok {
		return t
	}
	r.n++
	t := "[redacted:" + strconv.Itoa(r.n) + "]"
	r.tokens[secret] = t
	return t
}

func isToken(s string) bool {
	m := tokenRe.FindStringIndex(s)
	return m != nil && m[0] == 0 && m[1] == len(s)
}

// Observe notes the tokens already in rec (a trace redacted before), so
// that new tokens do not reuse their numbers. Call it on every record
// (and ObserveHeader on the header) before the first Apply.
func (r *Redactor) Observe(rec *Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observe(string(rec.Raw), rec.Note, rec.Stream)
	if h := rec.HTTP; h != nil {
		r.observe(h.URL)
		for _, f := range h.Header {
			r.observe(f.Value)
		}
	}
	if s := rec.SSE; s != nil {
		r.observe(s.ID, s.Event, s.Data)
	}
	if p := rec.RPC; p != nil {
		r.observe(p.ID, p.TaskID, p.Method, p.Status)
	}
	if f := rec.Fault; f != nil {
		r.observe(f.Action, f.Target.EventID, f.Target.RPCID, f.Target.Method, f.Target.TaskID)
		for _, p := range f.Params {
			r.observe(p.Value)
		}
	}
}

// ObserveHeader is Observe for a trace header.
func (r *Redactor) ObserveHeader(h *Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observe(h.Command...)
	for _, l := range h.Labels {
		r.observe(l.Value)
	}
	if f := h.Faults; f != nil {
		r.observe(f.Specs...)
		r.observe(f.Decisions...)
		r.observe(f.Note)
	}
}

func (r *Redactor) observe(texts ...string) {
	for _, t := range texts {
		for _, m := range tokenRe.FindAllStringSubmatch(t, -1) {
			if n, err := strconv.Atoi(m[1]); err == nil && n > r.n {
				r.n = n
			}
		}
	}
}

// ApplyHeader redacts a trace header: "Name: value" arguments of the
// command line with a secret header name, and the patterns in the
// command line, the label values and the fault schedule's specs,
// decisions and note.
func (r *Redactor) ApplyHeader(h *Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, a := range h.Command {
		h.Command[i] = r.patternsString(string(r.headLines([]byte(a))))
	}
	for i, l := range h.Labels {
		h.Labels[i].Value = r.patternsString(l.Value)
	}
	if f := h.Faults; f != nil {
		for i := range f.Specs {
			f.Specs[i] = r.patternsString(f.Specs[i])
		}
		for i := range f.Decisions {
			f.Decisions[i] = r.patternsString(f.Decisions[i])
		}
		f.Note = r.patternsString(f.Note)
	}
}

// Apply redacts rec in place (including what its pointers point to):
//
//  1. the values of secret header fields, in HTTP and in the head's Raw,
//     and of secret query parameters in the request URL;
//  2. the values JSONPaths select, in the JSON text of Raw (the whole
//     Raw, or each line of it, bare or after "data:") and of SSE data;
//  3. the patterns' matches in all text: Raw, Note, the URL and header
//     values, the SSE fields;
//  4. RPC is derived again from the redacted JSON, so it stays
//     consistent with Raw;
//  5. a Fault's name and parameter keys (tasksim's vocabulary) and its
//     numbers are kept; the patterns apply to its parameter values,
//     action, and target's strings (event id, JSON-RPC id and method,
//     task id), as they do to the RPC fields. Its target's stream is kept,
//     as every record's is.
//
// Tokens already present are left alone.
func (r *Redactor) Apply(rec *Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := rec.HTTP; h != nil {
		r.httpSecrets(h)
	}
	if rec.Kind == KindRequestHead || rec.Kind == KindResponseHead || rec.HTTP != nil {
		rec.Raw = r.headLines(rec.Raw)
	}
	rec.Raw = r.jsonBlob(rec.Raw)
	if s := rec.SSE; s != nil {
		data := string(r.jsonBlob([]byte(s.Data)))
		if data != s.Data && strings.Contains(s.Data, "\n") && rec.Kind == KindSSEEvent {
			// Data split over several data: lines: the lines of Raw were
			// not JSON on their own; write the event again.
			s.Data = data
			rec.Raw = appendSSE(nil, s)
		}
		s.Data = r.patternsString(data)
		s.ID = r.patternsString(s.ID)
		s.Event = r.patternsString(s.Event)
	}
	rec.Raw = r.redactPatterns(rec.Raw)
	rec.Note = r.patternsString(rec.Note)
	if h := rec.HTTP; h != nil {
		h.URL = r.patternsString(h.URL)
		for i := range h.Header {
			h.Header[i].Value = r.patternsString(h.Header[i].Value)
		}
	}
	if p := rec.RPC; p != nil {
		if d := describeRecord(rec); d != nil {
			rec.RPC = d
		} else {
			p.Method = r.patternsString(p.Method)
			p.ID = r.patternsString(p.ID)
			p.TaskID = r.patternsString(p.TaskID)
			p.Status = r.patternsString(p.Status)
		}
	}
	if f := rec.Fault; f != nil {
		r.faultPatterns(f)
	}
}

// httpSecrets redacts the values of secret header fields and query
// parameters of h.
func (r *Redactor) httpSecrets(h *HTTPHead) {
	for i, f := range h.Header {
		if r.headers[strings.ToLower(f.Name)] && f.Value != "" && !isToken(f.Value) {
			h.Header[i].Value = r.token(f.Value)
		}
	}
	if path, q, ok := strings.Cut(h.URL, "?"); ok {
		h.URL = path + "?" + RedactQuery(q, r.query, func(v string) string {
			if isToken(v) {
				return v
			}
			return r.token(v)
		})
	}
}

// faultPatterns applies the patterns to a fault's parameter values,
// action and target's strings.
func (r *Redactor) faultPatterns(f *Fault) {
	for i := range f.Params {
		f.Params[i].Value = r.patternsString(f.Params[i].Value)
	}
	f.Action = r.patternsString(f.Action)
	t := &f.Target
	t.EventID = r.patternsString(t.EventID)
	t.RPCID = r.patternsString(t.RPCID)
	t.Method = r.patternsString(t.Method)
	t.TaskID = r.patternsString(t.TaskID)
}

// headLines redacts "Name: value" lines with a secret name.
func (r *Redactor) headLines(b []byte) []byte {
	if len(b) == 0 || !bytes.Contains(b, []byte(":")) {
		return b
	}
	var out []byte
	changed := false
	for line := range bytes.Lines(b) {
		body := bytes.TrimRight(line, "\r\n")
		name, value, ok := bytes.Cut(body, []byte(":"))
		v := string(bytes.TrimSpace(value))
		if ok && r.headers[strings.ToLower(string(bytes.TrimSpace(name)))] && v != "" && !isToken(v) {
			i := bytes.Index(value, []byte(v))
			nl := append([]byte(nil), body[:len(name)+1+i]...)
			nl = append(nl, r.token(v)...)
			nl = append(nl, value[i+len(v):]...)
			nl = append(nl, line[len(body):]...)
			out = append(out, nl...)
			changed = true
			continue
		}
		out = append(out, line...)
	}
	if !changed {
		return b
	}
	return out
}

// jsonBlob applies the JSON paths to b if it is a JSON document, else to
// each of its lines that is one (bare, or after "data:" as in an event
// stream).
func (r *Redactor) jsonBlob(b []byte) []byte {
	if len(r.paths) == 0 || len(b) == 0 {
		return b
	}
	if json.Valid(b) {
		return r.jsonDoc(b)
	}
	var out []byte
	changed := false
	for line := range bytes.Lines(b) {
		body := bytes.TrimRight(line, "\r\n")
		prefix := 0
		if rest, ok := bytes.CutPrefix(body, []byte("data:")); ok {
			prefix = len(body) - len(bytes.TrimPrefix(rest, []byte(" ")))
		}
		doc := body[prefix:]
		if len(doc) > 0 && (doc[0] == '{' || doc[0] == '[') && json.Valid(doc) {
			red := r.jsonDoc(doc)
			if !bytes.Equal(red, doc) {
				changed = true
				nl := append([]byte(nil), body[:prefix]...)
				nl = append(nl, red...)
				line = append(nl, line[len(body):]...)
			}
		}
		out = append(out, line...)
	}
	if !changed {
		return b
	}
	return out
}

// jsonDoc replaces the selected values of a valid JSON document by token
// strings.
func (r *Redactor) jsonDoc(doc []byte) []byte {
	spans := selectSpans(doc, r.paths)
	if len(spans) == 0 {
		return doc
	}
	var out []byte
	last := 0
	for _, s := range spans {
		v := doc[s.start:s.end]
		secret := string(v)
		if v[0] == '"' {
			var str string
			if json.Unmarshal(v, &str) == nil {
				secret = str
			}
			if isToken(secret) {
				continue
			}
		}
		out = append(out, doc[last:s.start]...)
		out = append(out, '"')
		out = append(out, r.token(secret)...)
		out = append(out, '"')
		last = s.end
	}
	if out == nil {
		return doc
	}
	return append(out, doc[last:]...)
}

// redactPatterns replaces the patterns' matches, leaving tokens alone.
func (r *Redactor) redactPatterns(b []byte) []byte {
	if len(r.patterns) == 0 || len(b) == 0 {
		return b
	}
	for _, re := range r.patterns {
		matches := re.FindAllSubmatchIndex(b, -1)
		if matches == nil {
			continue
		}
		tokens := tokenRe.FindAllIndex(b, -1)
		var out []byte
		last := 0
		for _, m := range matches {
			start, end := m[0], m[1]
			if len(m) >= 4 {
				if m[2] < 0 {
					continue
				}
				start, end = m[2], m[3]
			}
			if start == end || overlaps(tokens, start, end) {
				continue
			}
			out = append(out, b[last:start]...)
			out = append(out, r.token(string(b[start:end]))...)
			last = end
		}
		if out != nil {
			b = append(out, b[last:]...)
		}
	}
	return b
}

func (r *Redactor) patternsString(s string) string {
	if len(r.patterns) == 0 || s == "" {
		return s
	}
	return string(r.redactPatterns([]byte(s)))
}

func overlaps(spans [][]int, start, end int) bool {
	for _, s := range spans {
		if start < s[1] && s[0] < end {
			return true
		}
	}
	return false
}

// appendSSE appends the wire form of an event (id, event, retry, data
// lines, blank line).
func appendSSE(dst []byte, s *SSEFields) []byte {
	if s.HasID {
		dst = append(dst, "id: "+s.ID+"\n"...)
	}
	if s.Event != "" {
		dst = append(dst, "event: "+s.Event+"\n"...)
	}
	if s.HasRetry {
		dst = append(dst, "retry: "+strconv.FormatInt(s.Retry.Milliseconds(), 10)+"\n"...)
	}
	for line := range strings.SplitSeq(s.Data, "\n") {
		dst = append(dst, "data: "+line+"\n"...)
	}
	return append(dst, '\n')
}
