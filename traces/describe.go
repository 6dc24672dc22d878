package traces

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Names DescribeMessage looks for (MCP 2025-11-25 Tasks, SEP-1905,
// SEP-2679). The traces package does not import the protocol package: a
// trace must describe traffic that breaks the protocol too.
const (
	metaRelatedTask   = "io.modelcontextprotocol/related-task"
	methodTaskPartial = "notifications/tasks/partial"
)

// DescribeMessage returns what a trace reader wants to know of one
// JSON-RPC message without parsing it again, or nil if raw is not a JSON
// object shaped like a JSON-RPC message (a "method", or a "result" or
// "error" with an "id"). It never fails: fields it cannot read stay zero.
//
//   - Type: "request" (method and id), "notification" (method, no id) or
//     "response";
//   - ID: the id as on the wire, compacted (`7`, `"a"`, `null`);
//   - TaskID: params.taskId, result.task.taskId, result.taskId, or the
//     io.modelcontextprotocol/related-task meta of params or result;
//   - Status: params.status, result.task.status or result.status;
//   - SeqNrs: the seqNr of each item of result["partial-content"] (none
//     if an item is not an object);
//   - Seq: params.seq of notifications/tasks/partial;
//   - IsComplete: result.isComplete;
//   - ErrorCode: error.code;
//   - ResultType: result.resultType (MCP 2026-07-28).
//
// The task shapes of MCP 2026-07-28's tasks extension need nothing more:
// its flat CreateTaskResult and DetailedTask carry result.taskId and
// result.status, tasks/get, tasks/update and tasks/cancel params.taskId,
// and notifications/tasks a DetailedTask as params (params.taskId,
// params.status).
//
// Member names are matched exactly (JSON-RPC's are case-sensitive), with
// escapes decoded; of duplicate members the last one counts.
//
// It runs on the recorder's hot path, once per recorded message: after
// json.Valid, one walk reads the members it needs and skips every other
// value, content included, without decoding or allocating.
func DescribeMessage(raw []byte) *RPCFields {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return nil
	}
	var id, method, params, result, errv []byte
	pick(raw, member{"id", &id}, member{"method", &method}, member{"params", &params},
		member{"result", &result}, member{"error", &errv})
	methodName, hasMethod := jsonString(method)
	f := &RPCFields{}
	switch {
	case hasMethod && id != nil:
		f.Type, f.Method = "request", methodName
	case hasMethod:
		f.Type, f.Method = "notification", methodName
	case (result != nil || errv != nil) && id != nil:
		f.Type = "response"
	default:
		return nil
	}
	if id != nil {
		var b bytes.Buffer
		if json.Compact(&b, id) == nil {
			f.ID = b.String()
		}
	}
	describeTask(f, params, result)
	var code []byte
	pick(errv, member{"code", &code})
	if n, ok := jsonInt(code); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
		f.ErrorCode = int(n)
	}
	return f
}

// describeTask fills the fields of f that params and result tell of a
// task: TaskID, Status, SeqNrs, Seq and IsComplete; and the result's
// ResultType.
func describeTask(f *RPCFields, params, result []byte) {
	var pTaskID, pStatus, pSeq, pMeta []byte
	pick(params, member{"taskId", &pTaskID}, member{"status", &pStatus}, member{"seq", &pSeq}, member{"_meta", &pMeta})
	var rTask, rTaskID, rStatus, rSegs, rComplete, rMeta, rType []byte
	pick(result, member{"task", &rTask}, member{"taskId", &rTaskID}, member{"status", &rStatus},
		member{"partial-content", &rSegs}, member{"isComplete", &rComplete}, member{"_meta", &rMeta},
		member{"resultType", &rType})
	var tTaskID, tStatus []byte
	pick(rTask, member{"taskId", &tTaskID}, member{"status", &tStatus})
	f.TaskID = firstString(pTaskID, tTaskID, rTaskID, relatedTaskID(pMeta), relatedTaskID(rMeta))
	f.Status = firstString(pStatus, tStatus, rStatus)
	f.ResultType = firstString(rType)
	f.SeqNrs = seqNrs(rSegs)
	if f.Method == methodTaskPartial {
		f.Seq, f.HasSeq = jsonInt(pSeq)
	}
	if rComplete != nil {
		f.HasIsComplete = json.Unmarshal(rComplete, &f.IsComplete) == nil
	}
}

// member is a member name an object is searched for, and where its raw
// value goes.
type member struct {
	name string
	v    *[]byte
}

// pick sets the raw value of each wanted member of obj, a valid JSON
// value, that obj has; of duplicates the last one counts. For anything but
// an object it sets nothing.
func pick(obj []byte, want ...member) {
	eachMember(obj, func(name, v []byte) {
		for _, m := range want {
			if string(name) == m.name {
				*m.v = v
				return
			}
		}
	})
}

// relatedTaskID reads meta["io.modelcontextprotocol/related-task"].taskId.
func relatedTaskID(meta []byte) []byte {
	var rel, id []byte
	eachMember(meta, func(name, v []byte) {
		if string(name) == metaRelatedTask {
			rel = v
		}
	})
	eachMember(rel, func(name, v []byte) {
		if string(name) == "taskId" {
			id = v
		}
	})
	return id
}

// seqNrs reads the seqNr of each item of a partial-content array; an item
// that is neither an object nor null makes it give none.
func seqNrs(arr []byte) []int64 {
	var out []int64
	ok := eachElement(arr, func(item []byte) bool {
		switch item[0] {
		case 'n': // null
			return true
		case '{':
			var nr []byte
			eachMember(item, func(name, v []byte) {
				if string(name) == "seqNr" {
					nr = v
				}
			})
			if n, ok := jsonInt(nr); ok {
				out = append(out, n)
			}
			return true
		}
		return false
	})
	if !ok {
		return nil
	}
	return out
}

// walker moves through a JSON text that json.Valid accepted.
type walker struct {
	b []byte
	i int
}

func (w *walker) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

// value returns the raw bytes of the value at the cursor and moves past.
func (w *walker) value() []byte {
	w.space()
	start := w.i
	switch w.b[w.i] {
	case '"':
		w.i++
		for w.b[w.i] != '"' {
			if w.b[w.i] == '\\' {
				w.i++
			}
			w.i++
		}
		w.i++
	case '{', '[':
		depth := 0
		for {
			switch w.b[w.i] {
			case '"':
				w.value()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for w.i < len(w.b) && bytes.IndexByte([]byte(",}] \t\n\r"), w.b[w.i]) < 0 {
			w.i++
		}
	}
	return w.b[start:w.i]
}

// eachMember calls f with the name and raw value of each member of obj, a
// valid JSON value; for anything but an object it does nothing.
func eachMember(obj []byte, f func(name, v []byte)) {
	if len(obj) == 0 || obj[0] != '{' {
		return
	}
	w := &walker{b: obj, i: 1}
	for {
		w.space()
		switch w.b[w.i] {
		case '}':
			return
		case ',':
			w.i++
			continue
		}
		key := w.value()
		w.space()
		w.i++ // the colon
		f(unquote(key), w.value())
	}
}

// eachElement calls f with each item of arr, a valid JSON value, until f
// returns false; it reports whether arr was an array f accepted whole.
func eachElement(arr []byte, f func(item []byte) bool) bool {
	if len(arr) == 0 || arr[0] != '[' {
		return false
	}
	w := &walker{b: arr, i: 1}
	for {
		w.space()
		switch w.b[w.i] {
		case ']':
			return true
		case ',':
			w.i++
			continue
		}
		if !f(w.value()) {
			return false
		}
	}
}

// unquote returns the text of a JSON string token: a slice of it when it
// is plain, decoded as encoding/json does otherwise (escapes, and invalid
// UTF-8 replaced).
func unquote(tok []byte) []byte {
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	_ = json.Unmarshal(tok, &s)
	return []byte(s)
}

func jsonString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return string(unquote(raw)), true
}

func firstString(vals ...[]byte) string {
	for _, v := range vals {
		if s, ok := jsonString(v); ok && s != "" {
			return s
		}
	}
	return ""
}

// jsonInt reads a JSON number that is an integer (1, 1.0, 1e2).
func jsonInt(raw []byte) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}
