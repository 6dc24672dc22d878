package timeline

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"iter"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/traces"
)

// Hostile text a trace may carry in a payload, a note, a fault's action
// or a header label: none of it may reach the page as markup.
const (
	scriptPayload = `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"</title><script>document.title='pwned'</script>"}}`
	imgAction     = `dropped <img src=x onerror="document.title='pwned'">`
	noteText      = `</pre><script>alert(1)</script>`
)

// fixture is a checker fixture that breaks S1905-SEQNR, with a fault
// layer's records and hostile text added after it: a message the server
// sent and the client never got (server side only), the fault that
// dropped it, a client-side message with a <script> payload, and an
// annotation.
func fixture(t testing.TB) (traces.Header, []traces.Record) {
	t.Helper()
	f, err := os.Open("../check/testdata/fail/S1905-SEQNR.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := traces.NewJSONLReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []traces.Record
	for rec, err := range traces.All(rd) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	h := rd.Header()
	h.Labels = append(h.Labels, traces.Label{Key: "note", Value: "<script>alert('label')</script>"})
	n := uint64(len(recs))
	add := func(r traces.Record) {
		r.Index = n
		n++
		recs = append(recs, r)
	}
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"working"}}`)
	add(traces.Record{Conn: 9, Stream: "conn", Dir: traces.DirServerToClient, Kind: traces.KindMessage, Side: traces.SideServer, Raw: msg, RPC: traces.DescribeMessage(msg)})
	add(traces.Record{Conn: 9, Stream: "stdout:s9/id:", Kind: traces.KindFault, Fault: &traces.Fault{Name: "drop-partial", Action: imgAction,
		Target: traces.Target{Conn: 9, Record: n - 1, HasRecord: true}}})
	add(traces.Record{Conn: 9, Stream: "conn", Dir: traces.DirServerToClient, Kind: traces.KindMessage, Side: traces.SideClient, Raw: []byte(scriptPayload), RPC: traces.DescribeMessage([]byte(scriptPayload))})
	add(traces.Record{Conn: 9, Kind: traces.KindAnnotation, Note: noteText})
	return h, recs
}

func seqOf(recs []traces.Record) iter.Seq2[traces.Record, error] {
	return func(yield func(traces.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// fixtureRun is the fixture as a run, judged by the checker in the same
// pass that fills the run.
func fixtureRun(t testing.TB, o *Options) (*Run, []traces.Record) {
	t.Helper()
	h, recs := fixture(t)
	run := NewRun("fixture <S1905-SEQNR>", o)
	v, err := check.Check(run.Tee(seqOf(recs)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Failed() {
		t.Fatal("the fixture should break S1905-SEQNR")
	}
	run.Header, run.Verdict = h, v
	return run, recs
}

// svgDoc is the picture parsed as XML: the structural facts the tests
// assert.
type svgNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []svgNode  `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n svgNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n svgNode) hasClass(c string) bool { return slices.Contains(strings.Fields(n.attr("class")), c) }

// walk calls f on n and every node below it.
func (n svgNode) walk(f func(svgNode)) {
	f(n)
	for _, c := range n.Nodes {
		c.walk(f)
	}
}

// pictures parses every <svg> of a page.
func pictures(t *testing.T, page string) []svgNode {
	t.Helper()
	var out []svgNode
	for _, m := range regexp.MustCompile(`(?s)<svg class="tl-svg".*?</svg>`).FindAllString(page, -1) {
		var n svgNode
		if err := xml.Unmarshal([]byte(m), &n); err != nil {
			t.Fatalf("the picture is not well-formed: %v", err)
		}
		out = append(out, n)
	}
	return out
}

// TestWriteDrawsTheRun: the picture has a lane per connection or HTTP
// exchange, an arrow per message with a direction, a mark per fault,
// and highlights exactly the records the verdict's findings name; the
// verdict table lists every rule, the failed one with links to them.
func TestWriteDrawsTheRun(t *testing.T) {
	run, recs := fixtureRun(t, nil)
	var buf bytes.Buffer
	if err := Write(&buf, "timeline test", run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	pics := pictures(t, page)
	if len(pics) != 1 {
		t.Fatalf("%d pictures, want 1", len(pics))
	}
	wantLanes := map[string]bool{}
	var wantArrows, wantFaults int
	for _, r := range recs {
		k, _ := laneKey(r)
		wantLanes[k] = true
		if r.Kind == traces.KindFault {
			wantFaults++
		} else if isMessage(r.Kind) && r.Dir != traces.DirNone {
			wantArrows++
		}
	}
	wantViolations := map[string]bool{}
	for _, rr := range run.Verdict.Rules {
		if rr.Status == check.Fail {
			for _, f := range rr.Findings {
				for _, i := range f.Records {
					wantViolations[strconv.FormatUint(i, 10)] = true
				}
			}
		}
	}
	lanes := map[string]bool{}
	var arrows, faults, rows int
	violations := map[string]bool{}
	pics[0].walk(func(n svgNode) {
		switch {
		case n.hasClass("tl-lane"):
			lanes[n.attr("data-lane")] = true
		case n.XMLName.Local == "line" && n.hasClass("tl-arrow"):
			arrows++
		case n.hasClass("tl-fault"):
			faults++
		case n.hasClass("tl-row"):
			rows++
			if n.hasClass("tl-violation") {
				violations[n.attr("data-record")] = true
			}
		}
	})
	if fmt.Sprint(lanes) != fmt.Sprint(wantLanes) {
		t.Errorf("lanes %v, want %v", lanes, wantLanes)
	}
	if len(wantLanes) < 2 {
		t.Errorf("the fixture should have several lanes: %v", wantLanes)
	}
	if arrows != wantArrows || faults != wantFaults || rows != len(recs) {
		t.Errorf("%d arrows, %d fault marks, %d rows; want %d, %d, %d", arrows, faults, rows, wantArrows, wantFaults, len(recs))
	}
	if len(wantViolations) == 0 || fmt.Sprint(violations) != fmt.Sprint(wantViolations) {
		t.Errorf("violations highlighted %v, want %v", violations, wantViolations)
	}
	table := regexp.MustCompile(`(?s)<table class="tl-verdict">.*?</table>`).FindString(page)
	if got := strings.Count(table, "<tr class=\"tl-status-"); got != len(check.Catalog()) {
		t.Errorf("verdict table has %d rules, want %d", got, len(check.Catalog()))
	}
	for i := range wantViolations {
		if !strings.Contains(table, `href="#`+pics0ID(page)+`-r`+i+`"`) {
			t.Errorf("the verdict table does not link record %s", i)
		}
	}
	if !regexp.MustCompile(`<tr class="tl-status-FAIL"><td>S1905-SEQNR</td>`).MatchString(table) {
		t.Errorf("the verdict table does not fail S1905-SEQNR:\n%s", table)
	}
}

// pics0ID is the id of the page's first run.
func pics0ID(page string) string {
	return regexp.MustCompile(`<section class="tl-run" id="([^"]+)"`).FindStringSubmatch(page)[1]
}

// TestWriteEscapesTraceText: a payload, a fault's action, a note and a
// header label holding markup come out as text. Every trace text is
// escaped, so the page's only "<script" and no "<img" are its own.
func TestWriteEscapesTraceText(t *testing.T) {
	run, _ := fixtureRun(t, nil)
	var buf bytes.Buffer
	if err := Write(&buf, "<script>alert('title')</script>", run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(strings.ToLower(page), "<script"); n != 1 {
		t.Errorf("%d <script elements, want 1 (the page's own)", n)
	}
	if strings.Contains(strings.ToLower(page), "<img") {
		t.Error("a fault's action reached the page as an <img> element")
	}
	for _, want := range []string{"&lt;script&gt;document.title=", "&lt;img src=x onerror=", "&lt;/pre&gt;&lt;script&gt;alert(1)", "&lt;script&gt;alert(&#39;label&#39;)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	var sect bytes.Buffer
	if err := WriteSection(&sect, run); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.ToLower(sect.String()), "<script"); n != 1 {
		t.Errorf("the section has %d <script elements, want 1", n)
	}
}

// TestLayoutFollowsTheSides: a message seen on the wire crosses its lane,
// one seen on the server's side of the fault layer runs between the
// server's line and the fault layer, one on the client's side between
// the fault layer and the client's line; a fault is marked on the fault
// layer.
func TestLayoutFollowsTheSides(t *testing.T) {
	run := NewRun("sides", nil)
	recs := []traces.Record{
		{Conn: 1, Kind: traces.KindMessage, Dir: traces.DirClientToServer},
		{Conn: 1, Kind: traces.KindMessage, Dir: traces.DirServerToClient, Side: traces.SideServer},
		{Conn: 1, Kind: traces.KindFault, Fault: &traces.Fault{Name: "drop-response", Action: "dropped"}},
		{Conn: 1, Kind: traces.KindMessage, Dir: traces.DirServerToClient, Side: traces.SideClient},
		{Conn: 1, Kind: traces.KindConnError, Side: traces.SideClient, Note: "cut"},
	}
	for i, r := range recs {
		r.Index = uint64(i)
		run.Add(r)
	}
	pic := run.layout("x")
	c := pic.Cols[0]
	type seg struct {
		arrow        bool
		x1, x2, mark float64
	}
	var got []seg
	for _, r := range pic.Rows[1:] { // after the lane's head
		got = append(got, seg{r.Arrow, r.X1, r.X2, r.MX})
	}
	want := []seg{{true, c.CX, c.SX, 0}, {true, c.SX, c.MX, 0}, {false, 0, 0, c.MX}, {true, c.MX, c.CX, 0}, {false, 0, 0, c.CX}}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v (client %v, layer %v, server %v)", got, want, c.CX, c.MX, c.SX)
	}
	if !pic.Lanes[0].Faulted {
		t.Error("the fault layer's line is not drawn")
	}
}

// TestColumnsAreReused: a lane that starts after another ended takes its
// column; lanes that overlap get their own.
func TestColumnsAreReused(t *testing.T) {
	run := NewRun("columns", nil)
	for i, ex := range []uint64{1, 1, 2, 3, 2, 3, 4} {
		run.Add(traces.Record{Index: uint64(i), Conn: 1, Exchange: ex, Kind: traces.KindMessage, Dir: traces.DirClientToServer})
	}
	pic := run.layout("x")
	col := map[string]float64{}
	for _, l := range pic.Lanes {
		col[l.Key] = l.X
	}
	// Rows: x1's head, 0, 1; x2's head, 2; x3's head, 3; 4 (x2); 5 (x3);
	// x4's head, 6. x2 starts right after x1 ended: a new column, so that
	// the two do not read as one lane. x3 starts a row later: x1's
	// column. x4 starts after x2 ended: x2's column.
	if col["c1/x1"] != col["c1/x3"] || col["c1/x2"] != col["c1/x4"] || col["c1/x1"] == col["c1/x2"] || len(pic.Cols) != 2 {
		t.Errorf("columns %v (%d columns), want x1 and x3 in one, x2 and x4 in another", col, len(pic.Cols))
	}
	// The sides are named once, over the first column: each lane has its
	// own head, and "client server client server" across the top named
	// none of them.
	var buf strings.Builder
	if err := Write(&buf, "columns", run); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `class="tl-colhead"`); n != 2 {
		t.Errorf("%d column heads, want 2 (client and server, once)", n)
	}
}

// TestBigTracesAreBounded: past MaxRecords records are counted, not
// drawn, and the page says how many, with their faults and violations;
// raw text is cut to MaxBytes. 10,000 records of 10 KB make a page of
// at most a few MB.
func TestBigTracesAreBounded(t *testing.T) {
	run := NewRun("big", nil)
	raw := []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("é", 5000) + `"}}`)
	const n = 10_000
	for i := range n {
		r := traces.Record{Index: uint64(i), Conn: 1, Stream: "conn", Kind: traces.KindMessage, Dir: traces.DirServerToClient, Raw: raw}
		if i%1000 == 999 {
			r = traces.Record{Index: uint64(i), Conn: 1, Kind: traces.KindFault, Fault: &traces.Fault{Name: "delay", Action: "delayed 1s", Verb: traces.VerbDelay, Delay: time.Second}}
		}
		run.Add(r)
	}
	run.Verdict = &check.Verdict{Records: n, Rules: []check.RuleResult{{Rule: check.Catalog()[0], Status: check.Fail, Failures: 2,
		Findings: []check.Finding{{Records: []uint64{5, 9000}, Message: "bad"}}}}}
	var buf bytes.Buffer
	if err := Write(&buf, "big", run); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if added, drawn := run.Records(); added != n || drawn != DefaultMaxRecords {
		t.Errorf("added %d, drawn %d; want %d, %d", added, drawn, n, DefaultMaxRecords)
	}
	if rows := strings.Count(page, `<g class="tl-row`); rows != DefaultMaxRecords {
		t.Errorf("%d rows drawn, want %d", rows, DefaultMaxRecords)
	}
	want := fmt.Sprintf("Only the first %d records are drawn: %d more from record %d on are not (%d faults among them, and 1 record named by failed rules)",
		DefaultMaxRecords, n-DefaultMaxRecords, DefaultMaxRecords, 8)
	if !strings.Contains(page, want) {
		t.Errorf("the page does not say what it left out (%q)", want)
	}
	if !strings.Contains(page, "9000 (not drawn)") || !strings.Contains(page, `data-record="5">5</a>`) {
		t.Error("the verdict table should link the drawn record 5 and name 9000 as not drawn")
	}
	if !strings.Contains(page, fmt.Sprintf("(%d of %d bytes)", DefaultMaxBytes, len(raw))) {
		t.Error("a cut payload does not say it was cut")
	}
	if len(page) > 4<<20 {
		t.Errorf("page of %d bytes for %d records of %d bytes", len(page), n, len(raw))
	}
	if strings.Contains(page, "not UTF-8") {
		t.Error("raw text was cut inside a character")
	}
}

// TestRunIDsAreUnique: runs on one page, and sections on one page, have
// distinct element ids.
func TestRunIDsAreUnique(t *testing.T) {
	a, _ := fixtureRun(t, nil)
	b, _ := fixtureRun(t, nil)
	b.Title = "another"
	var buf bytes.Buffer
	if err := Write(&buf, "two", a, b); err != nil {
		t.Fatal(err)
	}
	if err := WriteSection(&buf, b); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`<section class="tl-run" id="([^"]+)"`).FindAllStringSubmatch(buf.String(), -1) {
		if seen[m[1]] {
			t.Errorf("id %s twice", m[1])
		}
		seen[m[1]] = true
	}
	// The last section repeats run b's title at index 0: a distinct id
	// needs a distinct title or index, which callers give.
	if len(seen) != 3 {
		t.Errorf("%d distinct run ids, want 3", len(seen))
	}
}

// TestFromTraceReadsACutTrace: a trace cut inside a record is drawn up to
// its last whole record, with a note.
func TestFromTraceReadsACutTrace(t *testing.T) {
	h, recs := fixture(t)
	var buf bytes.Buffer
	w, err := traces.NewWriter(&buf, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()[:buf.Len()-5]
	run, err := FromTrace(data, "cut", nil)
	if err != nil {
		t.Fatal(err)
	}
	if added, _ := run.Records(); added != len(recs)-1 {
		t.Errorf("%d records, want %d", added, len(recs)-1)
	}
	if len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "cut") {
		t.Errorf("notes %q", run.Notes)
	}
	if _, err := FromTrace([]byte("not a trace"), "x", nil); err == nil {
		t.Error("FromTrace read bytes that are not a trace")
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriteReturnsTheWriteError: a failed write is the error.
func TestWriteReturnsTheWriteError(t *testing.T) {
	run, _ := fixtureRun(t, nil)
	if err := Write(&failWriter{n: 1000}, "x", run); err == nil || err.Error() != "disk full" {
		t.Errorf("error %v, want disk full", err)
	}
}

// TestFaultSpans: a fault that lasts shades its lane while it acts: a
// delay until its length has passed, a stalled stream to its lane's end;
// a dropped message only its own row.
func TestFaultSpans(t *testing.T) {
	run := NewRun("spans", nil)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	recs := []traces.Record{
		{Conn: 1, Offset: ms(0), Kind: traces.KindMessage, Dir: traces.DirClientToServer},
		{Conn: 1, Offset: ms(10), Kind: traces.KindFault, Fault: &traces.Fault{Name: "delay", Action: "delayed 200ms", Verb: traces.VerbDelay, Delay: 200 * time.Millisecond}},
		{Conn: 1, Offset: ms(50), Kind: traces.KindMessage, Dir: traces.DirServerToClient},
		{Conn: 1, Offset: ms(210), Kind: traces.KindMessage, Dir: traces.DirServerToClient},
		{Conn: 1, Offset: ms(300), Kind: traces.KindMessage, Dir: traces.DirServerToClient},
		{Conn: 2, Offset: ms(310), Kind: traces.KindFault, Fault: &traces.Fault{Name: "stall", Action: "stream stalled at it", Verb: traces.VerbStall}},
		{Conn: 2, Offset: ms(320), Kind: traces.KindMessage, Dir: traces.DirServerToClient},
		{Conn: 2, Offset: ms(900), Kind: traces.KindConnClose},
		{Conn: 3, Offset: ms(950), Kind: traces.KindFault, Fault: &traces.Fault{Name: "drop-response", Action: "dropped"}},
		{Conn: 3, Offset: ms(960), Kind: traces.KindMessage, Dir: traces.DirClientToServer},
	}
	for i, r := range recs {
		r.Index = uint64(i)
		run.Add(r)
	}
	pic := run.layout("x")
	rowOf := func(rec uint64) float64 {
		for _, r := range pic.Rows {
			if r.ID != "" && r.Record == rec {
				return r.Y
			}
		}
		t.Fatalf("no row for record %d", rec)
		return 0
	}
	type span struct{ from, to float64 }
	var got []span
	for _, s := range pic.Spans {
		got = append(got, span{s.Y, s.Y + s.H})
	}
	mid := func(rec uint64) float64 { return rowOf(rec) + rowH/2 }
	want := []span{
		{mid(1), rowOf(3) + rowH}, // the delay: to the 210 ms record, not the 300 ms one
		{mid(5), rowOf(7) + rowH}, // the stall: to the lane's last record
	}
	if !slices.Equal(got, want) {
		t.Errorf("spans %v, want %v", got, want)
	}
	if len(pic.Spans) == 2 && !strings.Contains(pic.Spans[0].Title, "#1 delay: delayed 200ms") {
		t.Errorf("span title %q", pic.Spans[0].Title)
	}
}
