// Command tasksim is the tasksim command line; see internal/cli.
package main

import (
	"os"

	"github.com/tasksim/tasksim/internal/cli"
)

func main() {
	st, stop := cli.OSState()
	code := cli.Main(st)
	stop()
	os.Exit(code)
}
