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
	// ReopenTerminal reports a completed task as working in tasks/get
	// (TASK-STATUS-TRANSITION).
	ReopenTerminal bool
	// NotFoundInternal answers an unknown task id with -32603 instead of
	// -32602 (TASK-NOT-FOUND).
	NotFoundInternal bool
	// NoCreatedAt leaves createdAt out of every task (TASK-FIELDS).
	NoCreatedAt bool
	// NoRelatedTask leaves the related-task meta out of tasks/result
	// (TASK-RESULT).
	NoRelatedTask bool
	// SharedTasks lets any session reach any task (TASK-ISOLATION).
	SharedTasks bool
	// LastSeqNrZero accepts lastSeqNr 0 (S1905-LASTSEQNR-INVALID).
	LastSeqNrZero bool
	// ResumeOffByOne answers tasks/result with lastSeqNr k from segment k
	// instead of k+1 (S1905-RESUME).
	ResumeOffByOne bool
	// ReversedMerge merges a streamed task's segments in reverse order
	// in tasks/result (S1905-MERGE).
	ReversedMerge bool
	// ImmediateWorking answers an immediate call with its task still
	// working (S1905-IMMEDIATE).
	ImmediateWorking bool
	// FailedWithoutError ends a failed stream without isError
	// (S1905-COMPLETE).
	FailedWithoutError bool
	// PartialsUnasked sends partial notifications to every client
	// (S2679-NEGOTIATION).
	PartialsUnasked bool
	// EmptyPartial sends the first partial with empty content
	// (S2679-CONTENT).
	EmptyPartial bool
	// PartialAfterTerminal sends one more partial after the terminal
	// status (S2679-AFTER-TERMINAL).
	PartialAfterTerminal bool
	// IgnoreModes answers every task-augmented call in task mode, without
	// the fallback warning (S1905-MODE-SELECT).
	IgnoreModes bool
}
