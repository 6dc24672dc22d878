// Package timeline draws a run's picture: a self-contained HTML page
// (inline SVG, CSS and script; it loads nothing) with one lane per
// connection or HTTP exchange, the messages as arrows between client and
// server, the faults marked where they acted, the records a rule's
// finding names highlighted, and the verdict table. tasksim sim, check,
// trace check and demo write it with --html; replay can too.
//
//	trace records ──▶ Run.Add (or Run.Tee around the checker's pass) ──▶ first MaxRecords kept
//	check.Verdict ──▶ Run.Verdict ──▶ findings' records highlighted
//	Run ──▶ layout: lanes in columns (reused once a lane ended), one row per record
//	    ──▶ Write (a page) | WriteSection (a fragment for another page)
//
// A lane is drawn like a sequence diagram turned into a column: the
// client's line on the left, the server's on the right, and, when a fault
// layer sits between them, a dashed line in the middle. A message
// observed on the wire crosses the whole lane; one observed on one side
// of the fault layer (docs/trace-format.md, "Whose view") stops at the
// dashed line, so a dropped message is an arrow from the server that
// never reaches the client, next to the fault's mark.
//
// Everything taken from a trace (payloads, notes, URLs, header values) is
// escaped by html/template; the page's size is bounded by
// Options.MaxRecords and Options.MaxBytes.
//
// Example:
//
//	run := timeline.NewRun("seed 42", nil)
//	v, err := check.Check(run.Tee(reader.Records()), nil)
//	if err != nil {
//		return err
//	}
//	run.Header, run.Verdict = reader.Header(), v
//	return timeline.Write(f, "tasksim sim --seed 42", run)
package timeline
