package traces

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// jsonPath is a compiled JSON path of the small dialect redaction uses:
//
//	params.arguments.apiKey        keys from the root ("$." in front is allowed)
//	result.content[*].text         [*] or .* : any member or element
//	result.content[0].text         an array index
//	$..password                    ..name: that key at any depth
//	params._meta["a.b/c"].taskId   a key with dots or brackets, quoted
type jsonPath struct {
	text  string
	steps []pathStep
}

type pathStep struct {
	desc  bool   // ..: at any depth below
	any   bool   // * : any key or index
	key   string // a member name
	index int    // an array index (isIdx)
	isIdx bool
}

// pathElem is one step of a location in a document: a member name or an
// array index.
type pathElem struct {
	key   string
	index int
	isIdx bool
}

func (s pathStep) matches(e pathElem) bool {
	switch {
	case s.any:
		return true
	case s.isIdx:
		return e.isIdx && e.index == s.index
	}
	return !e.isIdx && e.key == s.key
}

func compileJSONPath(text string) (jsonPath, error) {
	p := jsonPath{text: text}
	s := strings.TrimPrefix(text, "$")
	if s != "" && s[0] != '.' && s[0] != '[' {
		s = "." + s
	}
	for s != "" {
		var st pathStep
		var err error
		if st, s, err = nextPathStep(text, s); err != nil {
			return jsonPath{}, err
		}
		p.steps = append(p.steps, st)
	}
	if len(p.steps) == 0 {
		return jsonPath{}, pathError(text, "empty path (the whole message cannot be redacted)")
	}
	return p, nil
}

func pathError(text, why string) error {
	return fmt.Errorf("JSON path %q: %s", text, why)
}

// nextPathStep reads the step s, the rest of the path text, starts with
// (".name", "..name", ".*", "[...]", "..[...]") and returns the rest.
func nextPathStep(text, s string) (st pathStep, rest string, err error) {
	switch {
	case strings.HasPrefix(s, ".."):
		st.desc = true
		s = s[2:]
	case s[0] == '.':
		s = s[1:]
	case s[0] == '[':
		return bracketStep(text, s)
	default:
		return st, "", pathError(text, "unexpected "+strconv.Quote(s[:1]))
	}
	if strings.HasPrefix(s, "[") {
		if !st.desc {
			return st, "", pathError(text, "empty name before [")
		}
		// ..[...]: the bracket step at any depth. Its errors quote the
		// bracket alone.
		end := closingBracket(s)
		if end < 0 {
			return st, "", pathError(text, "unclosed [")
		}
		b, _, err := bracketStep(s[:end+1], s[:end+1])
		b.desc = true
		return b, s[end+1:], err
	}
	end := strings.IndexAny(s, ".[")
	if end < 0 {
		end = len(s)
	}
	switch name := s[:end]; name {
	case "":
		return st, "", pathError(text, "empty name")
	case "*":
		st.any = true
	default:
		st.key = name
	}
	return st, s[end:], nil
}

// bracketStep reads the step [*], [N], ["name"] or ['name'] s starts with
// and returns the rest.
func bracketStep(text, s string) (st pathStep, rest string, err error) {
	end := closingBracket(s)
	if end < 0 {
		return st, "", pathError(text, "unclosed [")
	}
	inner := s[1:end]
	switch {
	case inner == "*":
		st.any = true
	case strings.HasPrefix(inner, `"`):
		if err := json.Unmarshal([]byte(inner), &st.key); err != nil {
			return st, "", pathError(text, "bad quoted name "+inner)
		}
	case len(inner) >= 2 && inner[0] == '\'' && inner[len(inner)-1] == '\'':
		st.key = inner[1 : len(inner)-1]
	default:
		n, err := strconv.Atoi(inner)
		if err != nil || n < 0 {
			return st, "", pathError(text, "want [N], [*] or [\"name\"], found ["+inner+"]")
		}
		st.index, st.isIdx = n, true
	}
	return st, s[end+1:], nil
}

// closingBracket returns the index of the ] closing the [ at s[0],
// skipping quoted text, or -1.
func closingBracket(s string) int {
	var quote byte
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == ']':
			return i
		}
	}
	return -1
}

func (p *jsonPath) match(loc []pathElem) bool { return matchSteps(p.steps, loc) }

func matchSteps(steps []pathStep, loc []pathElem) bool {
	if len(steps) == 0 {
		return len(loc) == 0
	}
	s := steps[0]
	if s.desc {
		for i := range loc {
			if s.matches(loc[i]) && matchSteps(steps[1:], loc[i+1:]) {
				return true
			}
		}
		return false
	}
	return len(loc) > 0 && s.matches(loc[0]) && matchSteps(steps[1:], loc[1:])
}

// valueSpan is the byte range of a JSON value a path selected.
type valueSpan struct{ start, end int }

// jsonWalker finds the values of a valid JSON document that paths select.
// It keeps byte offsets so the rest of the document is left exactly as
// it was.
type jsonWalker struct {
	b     []byte
	pos   int
	paths []jsonPath
	loc   []pathElem
	spans []valueSpan
}

// selectSpans returns the spans the paths select in doc, which must be
// valid JSON, in document order. Selected values are not searched
// further.
func selectSpans(doc []byte, paths []jsonPath) []valueSpan {
	w := &jsonWalker{b: doc, paths: paths}
	w.value()
	return w.spans
}

func (w *jsonWalker) ws() {
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case ' ', '\t', '\r', '\n':
			w.pos++
		default:
			return
		}
	}
}

func (w *jsonWalker) selected() bool {
	for i := range w.paths {
		if w.paths[i].match(w.loc) {
			return true
		}
	}
	return false
}

func (w *jsonWalker) value() {
	w.ws()
	if w.pos >= len(w.b) {
		return
	}
	if len(w.loc) > 0 && w.selected() {
		start := w.pos
		w.skip()
		w.spans = append(w.spans, valueSpan{start, w.pos})
		return
	}
	switch w.b[w.pos] {
	case '{':
		w.pos++
		for {
			w.ws()
			if w.pos >= len(w.b) || w.b[w.pos] == '}' {
				w.pos++
				return
			}
			if w.b[w.pos] == ',' {
				w.pos++
				continue
			}
			ks := w.pos
			w.skipString()
			var key string
			json.Unmarshal(w.b[ks:w.pos], &key)
			w.ws()
			w.pos++ // ':'
			w.loc = append(w.loc, pathElem{key: key})
			w.value()
			w.loc = w.loc[:len(w.loc)-1]
		}
	case '[':
		w.pos++
		for i := 0; ; {
			w.ws()
			if w.pos >= len(w.b) || w.b[w.pos] == ']' {
				w.pos++
				return
			}
			if w.b[w.pos] == ',' {
				w.pos++
				continue
			}
			w.loc = append(w.loc, pathElem{index: i, isIdx: true})
			w.value()
			w.loc = w.loc[:len(w.loc)-1]
			i++
		}
	default:
		w.skip()
	}
}

// skip moves past one value.
func (w *jsonWalker) skip() {
	if w.pos >= len(w.b) {
		return
	}
	switch w.b[w.pos] {
	case '"':
		w.skipString()
	case '{', '[':
		depth := 0
		for w.pos < len(w.b) {
			switch w.b[w.pos] {
			case '"':
				w.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.pos++
			if depth == 0 {
				return
			}
		}
	default:
		for w.pos < len(w.b) && !strings.ContainsRune(",]} \t\r\n", rune(w.b[w.pos])) {
			w.pos++
		}
	}
}

func (w *jsonWalker) skipString() {
	w.pos++ // opening quote
	for w.pos < len(w.b) {
		switch w.b[w.pos] {
		case '\\':
			w.pos += 2
			continue
		case '"':
			w.pos++
			return
		}
		w.pos++
	}
}
