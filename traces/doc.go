// Package traces is tasksim's trace file format: what the recorder
// captures and the simulator replays. It holds the vocabulary of a trace
// ([Record], [Header], [Kind], [Direction], a [Fault] with its [Target],
// the [Side] of a fault layer a record was observed on, the fault
// [Schedule]), a [Writer] and a [Reader]
// for the binary format, [Verify], conversions to JSON lines and HAR and
// back from JSON lines, [DescribeMessage] (the JSON-RPC fields a trace
// keeps beside the raw bytes), [TimelineRow] (a record as one row of the
// timeline tasksim trace show prints) and a [Redactor] for secrets.
//
// Capture, file format and decoding are separate layers: the recorder
// produces Records, this package frames and checks them, and everything
// that consumes a trace reads Records from a [Source] (a [Reader], a
// [JSONLReader], or anything with Next).
//
// A trace file (docs/trace-format.md has the byte-level description):
//
//	+---------------------------------+
//	| magic "\x89TASKSIMTRACE\r\n\x1a\n" |  17 bytes
//	| format version (uint16 BE) = 3  |   2 bytes (1 and 2 still read)
//	+---------------------------------+
//	| frame: header                   |
//	+---------------------------------+
//	| frame: record 0                 |
//	| frame: record 1                 |   appended as traffic flows
//	| ...                             |
//	+---------------------------------+
//
//	frame = len (uint32 BE) | CRC-32C(len) | CRC-32C(payload) | payload
//	payload = one msgpack array: the fields in a fixed order
//
// The writer buffers and flushes at least every 100 ms, on Flush and on
// Close, so a killed writer loses at most the last moments, and its file
// reads back up to its last whole record: Next then returns a
// *TruncatedError (ErrTruncated), which callers tell apart from a
// *CorruptError (a checksum mismatch, a damaged length).
//
// A trace is the one observed history of a run. When a fault layer sits
// between client and server, each record says on which side of it it was
// observed: the client's view is the wire's records and the client side's,
// the server's view the wire's and the server side's ([Side.InView]), and
// fault records say what the layer did in between.
//
// Records flow like this:
//
//	recorder --Record--> Writer --[Redactor]--> frames --> run.trace
//	run.trace --> Reader (Source) --Record--> TimelineRow (show) | stats | replay | WriteJSONL | WriteHAR
//	run.jsonl --> JSONLReader (Source) --Record--> Writer --> edited.trace
package traces
