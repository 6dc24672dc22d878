package cli

import (
	"os"
	"testing"
)

// asTasksimEnv makes the test binary run as tasksim: commands that start
// tasksim as a child (load's reference server) then run this binary, and
// it is the real command line that answers.
const asTasksimEnv = "TASKSIM_CLI_TEST_AS_TASKSIM"

func TestMain(m *testing.M) {
	if os.Getenv(asTasksimEnv) == "1" {
		st, stop := OSState()
		code := Main(st)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
