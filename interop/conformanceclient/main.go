package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/streamhttp"
)

// timeout bounds one scenario; the suite's own default is 30 s.
const timeout = 25 * time.Second

// toolCalls are the calls the tool scenarios make, by scenario name.
var toolCalls = map[string]client.CallOptions{
	"tools_call": {Name: "add_numbers", Args: map[string]any{"a": 5, "b": 3}, Mode: client.ModePlain},
	"sse-retry":  {Name: "test_reconnection", Args: map[string]any{}, Mode: client.ModePlain},
}

// report is the JSON line printed on stdout.
type report struct {
	Scenario string         `json:"scenario"`
	OK       bool           `json:"ok"`
	Result   *reportResult  `json:"result,omitempty"`
	Error    string         `json:"error,omitempty"`
	Counts   *client.Counts `json:"counts,omitempty"`
}

type reportResult struct {
	Content  []mcp.ContentBlock `json:"content"`
	IsError  bool               `json:"isError"`
	Complete bool               `json:"complete"`
	Answer   string             `json:"answer"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Stdout, os.Stderr))
}

func run(args []string, scenario string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: conformanceclient [ARGS...] SERVER_URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		return 2
	}
	url := args[len(args)-1]
	rep := report{Scenario: scenario}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := play(ctx, scenario, url, &rep)
	if err != nil {
		rep.Error = err.Error()
		fmt.Fprintf(stderr, "conformanceclient: %s: %v\n", scenario, err)
	}
	rep.OK = err == nil
	line, _ := json.Marshal(rep)
	fmt.Fprintln(stdout, string(line))
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	return 1
}

var errUsage = errors.New("unknown scenario")

// play runs one scenario against the test server at url.
func play(ctx context.Context, scenario, url string, rep *report) error {
	call, isCall := toolCalls[scenario]
	if !isCall && scenario != "initialize" {
		return fmt.Errorf("%w %q (want initialize, tools_call or sse-retry in MCP_CONFORMANCE_SCENARIO)", errUsage, scenario)
	}
	sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: url})
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	// The test servers answer DELETE with 405 or 400; a failed DELETE
	// is not the scenario's concern.
	defer sess.Close()
	if !isCall {
		return nil
	}
	res, err := sess.CallTool(ctx, call)
	if res != nil {
		rep.Result = &reportResult{Content: res.Content, IsError: res.IsError, Complete: res.Complete, Answer: res.Answer}
		rep.Counts = &res.Counts
	}
	switch {
	case err != nil:
		return err
	case !res.Complete:
		return errors.New("the result is incomplete")
	case res.IsError:
		return fmt.Errorf("tool %s reported an error: %v", call.Name, res.Content)
	}
	return nil
}
