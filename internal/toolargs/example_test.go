package toolargs_test

import (
	"fmt"

	"github.com/tasksim/tasksim/internal/toolargs"
)

func ExampleFill() {
	tmpl := `{"delayMs":{{durationMs}},"steps":{{chunks}},"text":"task {{task}}"}`
	fmt.Println(string(toolargs.Fill(tmpl, toolargs.Values{Task: 3, DurationMs: 800, Chunks: 4})))
	fmt.Println(toolargs.Shaped(tmpl), toolargs.Check(tmpl))
	fmt.Println(toolargs.Check(`{"n":{{task}}`))
	// Output:
	// {"delayMs":800,"steps":4,"text":"task 3"}
	// true <nil>
	// not a JSON object
}
