package check

import (
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tasksim/tasksim/traces"
)

// twoSided returns the records of a one-view trace as a fault layer
// between the client and the server with a recorder on each side would
// write them (docs/trace-format.md, "Whose view"): every record once on
// the server's side and once on the client's, in the order they pass (a
// request on the client's side first, an answer on the server's). A
// record drop names is dropped toward the client: its server-side record
// is followed by the fault record drop returns, and the client never
// sees it.
func twoSided(recs []traces.Record, drop func(traces.Record) *traces.Fault) []traces.Record {
	var out []traces.Record
	add := func(r traces.Record, side traces.Side) {
		r.Side = side
		r.Index = uint64(len(out))
		out = append(out, r)
	}
	for _, r := range recs {
		if r.Dir == traces.DirClientToServer {
			add(r, traces.SideClient)
			add(r, traces.SideServer)
			continue
		}
		add(r, traces.SideServer)
		if f := drop(r); f != nil {
			f.Target.Record, f.Target.HasRecord = uint64(len(out)-1), true
			add(traces.Record{Offset: r.Offset, Conn: r.Conn, Exchange: r.Exchange, Stream: r.Stream, Kind: traces.KindFault, Fault: f, Note: f.String()}, traces.SideWire)
			continue
		}
		add(r, traces.SideClient)
	}
	return out
}

// dropEvent drops the SSE event with id toward the client.
func dropEvent(id, taskID string) func(traces.Record) *traces.Fault {
	return func(r traces.Record) *traces.Fault {
		if r.Kind != traces.KindSSEEvent || r.SSE == nil || r.SSE.ID != id {
			return nil
		}
		return &traces.Fault{Name: "drop-sse-event", Action: "dropped", Target: traces.Target{
			Conn: r.Conn, Exchange: r.Exchange, Stream: r.Stream, EventID: id, HasEventID: true, TaskID: taskID,
		}}
	}
}

// view returns the records of one end's view (sides wire and end, and
// the fault records), as a one-view trace: what that end alone saw.
func view(recs []traces.Record, end traces.Side) []traces.Record {
	var out []traces.Record
	for _, r := range recs {
		if r.Kind == traces.KindFault || r.Side.InView(end) {
			r.Side = traces.SideWire
			out = append(out, r)
		}
	}
	return out
}

// asOne returns the records with their sides forgotten: one conversation,
// as the checker read every trace before it read sides.
func asOne(recs []traces.Record) []traces.Record {
	out := slices.Clone(recs)
	for i := range out {
		out[i].Side = traces.SideWire
	}
	return out
}

func judgeRecords(t *testing.T, recs []traces.Record, opts *Options) *Verdict {
	t.Helper()
	v, err := Check(records(recs), opts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A dropped SSE event, seen on the server's side and not on the client's:
// the server rules judge what the server sent, and do not see the gap the
// client saw. The fixture's SEP-2679 partials on the standalone GET
// stream are seq 0, 1, 2; the event carrying seq 1 is dropped.
func TestSidesDroppedEventServerView(t *testing.T) {
	recs := readFixture(t, filepath.Join("testdata", "pass", "streaming.jsonl"))
	const task = "b87fc815-7d40-4371-b74e-07e2a64ea2e4"
	two := twoSided(recs, dropEvent("0_2", task))
	if len(two) != 2*len(recs) {
		t.Fatalf("%d records from %d: want one fault record in place of one client-side record", len(two), len(recs))
	}

	orig := judgeRecords(t, recs, nil)
	got := judgeRecords(t, two, nil)
	client := judgeRecords(t, view(two, traces.SideClient), nil)
	if orig.Sides || !got.Sides {
		t.Errorf("Sides: %v for the one-view fixture, %v for its two sides; want false, true", orig.Sides, got.Sides)
	}
	if got.Records != uint64(len(two)) || got.Faults != 1 {
		t.Errorf("%d records, %d faults; want %d, 1", got.Records, got.Faults, len(two))
	}

	// The client saw the gap: seq 2 after seq 0, excused by the fault.
	if r, _ := client.Result("S2679-SEQ"); r.Status != Pass || r.Excused == 0 {
		t.Fatalf("the client's view alone: S2679-SEQ %s, %d excused; want the gap, excused", r.Status, r.Excused)
	}
	// The server's rules did not: they judged what the server sent, as
	// on the fixture itself, nothing excused.
	if r, _ := got.Result("S2679-SEQ"); r.Status != Pass || r.Excused != 0 {
		t.Errorf("S2679-SEQ on both sides: %s, %d checked, %d excused; want PASS with nothing excused", r.Status, r.Checked, r.Excused)
	}
	for i, want := range orig.Rules {
		if want.Rule.Side == Client {
			continue
		}
		if diff := cmp.Diff(want, got.Rules[i]); diff != "" {
			t.Errorf("%s: the server's view of the two-sided trace differs from the fixture (-fixture +two-sided):\n%s", want.Rule.ID, diff)
		}
	}
	if got.Failed() {
		t.Errorf("a fault that dropped an event toward the client failed a rule:\n%s", text(t, got))
	}
	// Read as one conversation, as before sides, every message is seen
	// twice and the server is blamed.
	if old := judgeRecords(t, asOne(two), nil); !old.Failed() {
		t.Errorf("the two sides read as one conversation failed no rule; the test shows nothing:\n%s", text(t, old))
	}
}

// A client rule judges what the client saw. The fixture's client resumes
// a cut stream with a GET and Last-Event-ID 1_2, the last event the
// server sent before the cut (seqNr 1); the fault layer dropped that
// event toward the client.
func TestSidesClientRuleClientView(t *testing.T) {
	recs := readFixture(t, filepath.Join("testdata", "pass", "resume-last-event-id.jsonl"))
	const task = "c87e6d70-ed7f-445c-bc08-6be342767ec5"
	drop := dropEvent("1_2", task)

	t.Run("resuming after an event it never received fails", func(t *testing.T) {
		two := twoSided(recs, drop)
		got := judgeRecords(t, two, nil)
		r, _ := got.Result("CLIENT-RESUME")
		if r.Status != Fail || len(r.Findings) == 0 || !strings.Contains(r.Findings[0].Message, "never received") {
			t.Errorf("CLIENT-RESUME: %s %+v; want FAIL: the client resumed after an event it never received", r.Status, r.Findings)
		}
		// The server rules are the fixture's: the server sent 1_2 and
		// replayed what followed it.
		orig := judgeRecords(t, recs, nil)
		for i, want := range orig.Rules {
			if want.Rule.Side != Client && !cmp.Equal(want, got.Rules[i]) {
				t.Errorf("%s: %s, the fixture %s", want.Rule.ID, got.Rules[i].Status, want.Status)
			}
		}
		if old, _ := judgeRecords(t, asOne(two), nil).Result("CLIENT-RESUME"); old.Status == Fail {
			t.Errorf("read as one conversation CLIENT-RESUME fails too; the test shows nothing")
		}
	})

	t.Run("resuming after the last event it received passes", func(t *testing.T) {
		// The client resumes after 1_1, the last event it received; the
		// server replays 1_2 first.
		var edited []traces.Record
		for _, r := range recs {
			if r.Kind == traces.KindRequestHead && r.HTTP.Method == "GET" {
				r = r.Clone()
				for i, f := range r.HTTP.Header {
					if strings.EqualFold(f.Name, "Last-Event-ID") {
						r.HTTP.Header[i].Value = "1_1"
					}
				}
			}
			if r.Kind == traces.KindSSEEvent && r.SSE.ID == "1_3" {
				replay := recs[slices.IndexFunc(recs, func(q traces.Record) bool { return q.SSE != nil && q.SSE.ID == "1_2" })].Clone()
				replay.Conn, replay.Exchange, replay.Stream, replay.Offset = r.Conn, r.Exchange, r.Stream, r.Offset
				edited = append(edited, replay)
			}
			edited = append(edited, r)
		}
		// Only the first 1_2 (on the POST stream) is dropped.
		dropped := false
		two := twoSided(edited, func(r traces.Record) *traces.Fault {
			if dropped {
				return nil
			}
			f := drop(r)
			dropped = f != nil
			return f
		})
		got := judgeRecords(t, two, nil)
		if r, _ := got.Result("CLIENT-RESUME"); r.Status != Pass || r.Failures != 0 {
			t.Errorf("CLIENT-RESUME: %s %+v; want PASS: the client resumed after the last event it received", r.Status, r.Findings)
		}
		if got.Failed() {
			t.Errorf("a rule failed:\n%s", text(t, got))
		}
		// Read as one conversation, the client seems to have received
		// 1_2 and resumed after an older event.
		if old, _ := judgeRecords(t, asOne(two), nil).Result("CLIENT-RESUME"); old.Status != Fail {
			t.Errorf("read as one conversation CLIENT-RESUME is %s; the test shows nothing", old.Status)
		}
	})
}

// Limiting the rules to the server's and the transport's judges them as
// the full verdict does (no client's view is kept then).
func TestSidesRulesWithoutClient(t *testing.T) {
	recs := readFixture(t, filepath.Join("testdata", "pass", "streaming.jsonl"))
	two := twoSided(recs, dropEvent("0_2", "b87fc815-7d40-4371-b74e-07e2a64ea2e4"))
	var ids []string
	for _, r := range Catalog() {
		if r.Side != Client {
			ids = append(ids, r.ID)
		}
	}
	full := judgeRecords(t, two, nil)
	some := judgeRecords(t, two, &Options{Rules: ids})
	for _, r := range some.Rules {
		want, _ := full.Result(r.Rule.ID)
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("%s (-all rules +server rules only):\n%s", r.Rule.ID, diff)
		}
	}
	c := New(&Options{Rules: ids})
	for _, r := range two {
		c.Add(r)
	}
	if c.client != nil {
		t.Error("a client's view was kept for a verdict without client rules")
	}
}

// The client's view begins as a copy of the history so far (clone).
// Split every fixture at every record: the copy judges the rest as one
// Checker fed everything, and shares no pointer, map or slice with the
// original (each view then takes records the other does not).
func TestSidesClone(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", "*.jsonl"))
	if len(paths) < 20 {
		t.Fatalf("%d fixtures", len(paths))
	}
	for _, path := range paths {
		recs := readFixture(t, path)
		want := judgeRecords(t, recs, nil)
		for k := range len(recs) + 1 {
			a := New(nil)
			for _, r := range recs[:k] {
				a.Add(r)
			}
			b := a.clone()
			if shared := sharedMemory(a, b); len(shared) > 0 {
				t.Fatalf("%s split after %d records: the copy shares %s", filepath.Base(path), k, strings.Join(shared, ", "))
			}
			for _, r := range recs[k:] {
				b.Add(r)
			}
			if v := b.Verdict(); !reflect.DeepEqual(want, v) {
				t.Fatalf("%s split after %d records: the copy judges otherwise (-whole +split):\n%s", filepath.Base(path), k, cmp.Diff(want, v))
			}
		}
	}
}

// sharedMemory lists what a and b both reach that either could change:
// pointers, maps and slices (by their backing array), named by b's path.
// The options (read only) and the record lists of findings (never changed
// once made) may be shared.
func sharedMemory(a, b *Checker) []string {
	seen := map[uintptr]bool{}
	walkMemory(reflect.ValueOf(a), func(p uintptr, _ *memPath) { seen[p] = true })
	var shared []string
	walkMemory(reflect.ValueOf(b), func(p uintptr, path *memPath) {
		if seen[p] && len(shared) < 5 {
			shared = append(shared, path.String())
		}
	})
	return shared
}

// memPath is where a walk is, spelled only when reported.
type memPath struct {
	up  *memPath
	seg func() string
}

func (p *memPath) String() string {
	if p == nil {
		return ""
	}
	return p.up.String() + p.seg()
}

func walkMemory(v reflect.Value, visit func(uintptr, *memPath)) {
	done := map[uintptr]map[reflect.Type]bool{}
	finding := reflect.TypeFor[Finding]()
	var walk func(v reflect.Value, path *memPath)
	walk = func(v reflect.Value, path *memPath) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice:
			if v.IsNil() || v.Kind() == reflect.Slice && v.Cap() == 0 {
				return
			}
			p := v.Pointer()
			if done[p][v.Type()] {
				return
			}
			if done[p] == nil {
				done[p] = map[reflect.Type]bool{}
			}
			done[p][v.Type()] = true
			visit(p, path)
		}
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Struct:
			t := v.Type()
			for i := range v.NumField() {
				name := t.Field(i).Name
				if name == "opts" || name == "client" || t == finding && name == "Records" {
					continue
				}
				walk(v.Field(i), &memPath{path, func() string { return "." + name }})
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), &memPath{path, func() string { return "[" + strconv.Itoa(i) + "]" }})
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				k := it.Key()
				walk(k, path)
				walk(it.Value(), &memPath{path, func() string { return "{" + fmtKey(k) + "}" }})
			}
		}
	}
	walk(v, nil)
}

func fmtKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	return k.Type().String()
}

// A record of a side that is neither the client's nor the server's is in
// neither view.
func TestSidesUnknownSide(t *testing.T) {
	recs := readFixture(t, filepath.Join("testdata", "pass", "streaming.jsonl"))
	odd := asOne(recs)
	for i := range odd {
		if odd[i].Kind == traces.KindSSEEvent {
			odd[i].Side = traces.Side(7)
		}
	}
	v := judgeRecords(t, odd, nil)
	if r, _ := v.Result("S1905-SEQNR"); r.Status != Skip {
		t.Errorf("S1905-SEQNR with every SSE event on side-7: %s, want SKIP (no segment in any view)", r.Status)
	}
	if v.Sides {
		t.Error("Sides set for a trace of the wire and side-7 only")
	}
}

func text(t *testing.T, v *Verdict) string {
	t.Helper()
	var b strings.Builder
	if err := v.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
