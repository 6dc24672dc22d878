// Package toolargs fills the argument templates of a server's own tool:
// a JSON object in which placeholders stand for what the caller decides
// per call (how long the tool should work, in how many chunks).
// tasksim load fills one per task from the drawn task shape; tasksim
// check fills one per call from what the scenario needs (a task long
// enough to cancel, a stream that outlives its ttl).
//
//	--args '{"delayMs":{{durationMs}},"text":"task {{task}}"}'
//	        │ Fill(tmpl, Values{DurationMs: 800, Task: 3})
//	        ▼
//	{"delayMs":800,"text":"task 3"}
//
// Each placeholder becomes a JSON number; the rest of the template is
// left as it is.
package toolargs
