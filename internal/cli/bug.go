package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tasksim/tasksim/internal/plant"
)

// bugList is the value of --bug that lists the bugs instead of planting
// one.
const bugList = "list"

// plantedBug returns the known bug called name for --bug (plant.Named):
// for tasksim serve (onServer) only a bug of the server or its transport.
// An unknown name, or a client bug for serve, is a usage error.
func plantedBug(name string, onServer bool) (plant.Bug, error) {
	b, err := plant.Named(name)
	if err != nil {
		return plant.Bug{}, usagef("--bug: %v; --bug list lists them", err)
	}
	if onServer && b.OnClient() {
		return plant.Bug{}, usagef("--bug %s is a bug of the client: serve plants bugs of the server (--bug list lists them)", name)
	}
	return b, nil
}

// listBugs writes the known bugs, one a line: name, the rule that catches
// it, what the buggy peer does; for serve (onServer) the server's only.
func listBugs(w io.Writer, onServer bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, b := range plant.Bugs() {
		if onServer && b.OnClient() {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", b.Name, b.Rule, b.What)
	}
	return tw.Flush()
}

// bugNames are the values --bug completes to.
func bugNames(onServer bool) []string {
	names := []string{bugList}
	for _, b := range plant.Bugs() {
		if !onServer || !b.OnClient() {
			names = append(names, b.Name)
		}
	}
	return names
}
