package server

// Bugs plants one known protocol bug in the server, for tests only: the
// check suite's tests (sim) break the reference server one bug at a time
// and expect exactly the rule that names it to fail. A server for any
// other use leaves it zero. Each field names the rule it breaks.
type Bugs struct {
	// SeqNrFromZero numbers SEP-1905 segments from 0 (S1905-SEQNR).
	SeqNrFromZero bool
	// SeqFromOne numbers SEP-2679 partials from 1 (S2679-SEQ).
	SeqFromOne bool
	// SequentialIDs gives out task ids task-1, task-2, …
	// (TASK-ID-ENTROPY).
	SequentialIDs bool
	// CancelTerminal answers tasks/cancel of a terminal task with the task
	// instead of -32602 (TASK-CANCEL-TERMINAL).
	CancelTerminal bool
}
