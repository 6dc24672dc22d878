package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/check"
	"github.com/tasksim/tasksim/internal/refserver"
	"github.com/tasksim/tasksim/mcp"
	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/mcp/server"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/mcp/streamhttp"
	"github.com/tasksim/tasksim/traces"
)

// proxyFaults are the faults the matrix puts between the reference client
// and server, each bounded to act a few times so that the call can still
// complete: the client must resume, refetch or deduplicate its way to the
// complete, correct result. http-status acts on HTTP requests and a stall
// on the standalone GET stream only.
var proxyFaults = []struct {
	spec       string
	httpOnly   bool
	modesOnly  []client.Mode // nil: every mode
	stdioSkips string        // why stdio is left out, if it is
}{
	{spec: ""},
	{spec: "drop-sse-event:nth=2,count=1", httpOnly: true},
	{spec: "duplicate-seqnr:count=2"},
	{spec: "disconnect:stream=post,after=2,count=1", httpOnly: true},
	{spec: "delay:d=5ms,jitter=5ms,count=6"},
	{spec: "reorder:stream=post,nth=2,count=1", httpOnly: true},
	{spec: "http-status:code=503,method=tasks/get,count=1", httpOnly: true},
	{spec: "drop-partial:count=1"},
	{spec: "stall:stream=get,count=1", httpOnly: true},
	{spec: "drop-response:method=tasks/get,count=1"},
	{spec: "disconnect:stream=request,method=tasks/get,count=1", httpOnly: true},
}

var matrixModes = []client.Mode{client.ModeStreaming, client.ModeTask, client.ModePartial, client.ModePoll}

const matrixChunks = 4

func matrixWant() string {
	var b strings.Builder
	for i := 1; i <= matrixChunks; i++ {
		b.WriteString(server.ChunkText(i, 10))
	}
	return b.String()
}

// answerGate holds a call's tool after its first chunk until the server
// has handed its first answer to the call to the transport. Without it, on
// a slow machine the tool may finish before the server writes that answer,
// and a streaming call is then answered whole, in one message (SEP-1905
// test scenario 3), so a fault on its stream's second message has nothing
// to act on. With it, a streaming answer carries the first chunk and every
// later chunk follows as a message of its own, whatever the machine's
// speed. The gate opens on the server's side, so that a fault that drops or
// holds the first answer cannot keep it shut.
type answerGate struct {
	mu sync.Mutex
	ch chan struct{} // of the call being handled; nil: none yet
}

// arm gives the call about to be handled a gate, and returns what opens it.
func (g *answerGate) arm() (open func()) {
	ch := make(chan struct{})
	g.mu.Lock()
	g.ch = ch
	g.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// current is the gate of the call being handled (its tool is prepared
// while the call is handled, before the next call is).
func (g *answerGate) current() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

// gatedEndpoint is a server whose every tools/call gets a gate, opened by
// the call's first reply.
type gatedEndpoint struct {
	mcp.Endpoint
	gate *answerGate
}

func (e gatedEndpoint) NewSession(out mcp.Outbox) mcp.Session {
	return gatedSession{e.Endpoint.NewSession(out), e.gate}
}

type gatedSession struct {
	mcp.Session
	gate *answerGate
}

func (s gatedSession) Handle(ctx context.Context, msg *mcp.Message, r mcp.Replier) {
	if r != nil && msg.Method == mcp.MethodToolsCall {
		r = openingReplier{r, s.gate.arm()}
	}
	s.Session.Handle(ctx, msg, r)
}

// openingReplier opens its call's gate once a reply has been handed on.
type openingReplier struct {
	mcp.Replier
	open func()
}

func (r openingReplier) Reply(ctx context.Context, msg *mcp.Message, final bool) error {
	defer r.open()
	return r.Replier.Reply(ctx, msg, final)
}

func (r openingReplier) CloseConnection() {
	if cc, ok := r.Replier.(mcp.ConnectionCloser); ok {
		cc.CloseConnection()
	}
}

// startGatedUpstream serves the reference server, its slow_text gated,
// over Streamable HTTP on loopback, and returns its endpoint's URL.
func startGatedUpstream(t *testing.T) string {
	t.Helper()
	gate := &answerGate{}
	srv := server.New(&server.Options{PollInterval: 20 * time.Millisecond, Tools: gatedTools(gate)})
	return serveUpstream(t, srv, gatedEndpoint{srv, gate})
}

// serveUpstream serves ep (srv, or a decorator of it) over Streamable
// HTTP on loopback until the test ends, and returns its endpoint's URL.
func serveUpstream(t *testing.T, srv *server.Server, ep mcp.Endpoint) string {
	h := streamhttp.NewHandler(ep, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		hs.CloseClientConnections()
		hs.Close()
		srv.Close()
	})
	return hs.URL + streamhttp.DefaultPath
}

// withSlowText returns the built-in tools with slow_text run by prepare,
// once slow_text's own Prepare accepted the arguments.
func withSlowText(prepare func(raw json.RawMessage) (server.RunFunc, error)) []*server.Tool {
	tools := server.BuiltinTools()
	for i, tool := range tools {
		if tool.Name != server.ToolSlowText {
			continue
		}
		t := *tool
		t.Prepare = func(raw json.RawMessage) (server.RunFunc, error) {
			if _, err := tool.Prepare(raw); err != nil {
				return nil, err
			}
			return prepare(raw)
		}
		tools[i] = &t
	}
	return tools
}

// gatedTools are the built-in tools with slow_text's chunks after the
// first held by gate; its arguments and content are slow_text's.
func gatedTools(gate *answerGate) []*server.Tool {
	return withSlowText(func(raw json.RawMessage) (server.RunFunc, error) {
		gate := gate.current()
		a := server.SlowTextArgs{Chunks: 5, ChunkSize: 32}
		if err := json.Unmarshal(raw, &a); err != nil || a.IntervalMs == nil {
			return nil, fmt.Errorf("the gated slow_text takes chunks, chunkSize and intervalMs")
		}
		interval := time.Duration(*a.IntervalMs * float64(time.Millisecond))
		return func(ctx context.Context, c *server.Call) (*mcp.CallToolResult, error) {
			for i := 1; i <= a.Chunks; i++ {
				if i == 2 && gate != nil {
					select {
					case <-gate:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				if err := c.Sleep(ctx, interval); err != nil {
					return nil, err
				}
				if err := c.Emit(ctx, mcp.TextBlock(server.ChunkText(i, a.ChunkSize))); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{}, nil
		}, nil
	})
}

// TestProxyFaultMatrix: the reference client and server through tasksim
// proxy under each fault, in each mode, over HTTP and stdio. The client
// still gets the complete, correct result, and tasksim trace check on the
// recorded trace fails no rule. Over HTTP the server's tool waits after its
// first chunk until the call's first answer is out (answerGate), so that
// every fault finds its message in some mode at any machine speed.
func TestProxyFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault matrix runs every fault in every mode")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asTasksimEnv, "1") // the children (proxy, serve) run this binary as tasksim
	upstream := startGatedUpstream(t)
	for _, f := range proxyFaults {
		fired, ran := 0, 0
		for _, mode := range matrixModes {
			name := f.spec
			if name == "" {
				name = "no-fault"
			}
			t.Run("http/"+name+"/"+string(mode), func(t *testing.T) {
				ran++
				out := filepath.Join(t.TempDir(), "run.trace")
				args := []string{"--upstream", upstream, "--seed", "1", "--record", out}
				if f.spec != "" {
					args = append(args, "--fault", f.spec)
				}
				u, stop, stderr := startProxy(t, args...)
				runMatrixCall(t, &streamhttp.ClientTransport{URL: u}, mode)
				if code := stop(); code != ExitOK {
					t.Fatalf("proxy exit code %d: %s", code, stderr.String())
				}
				fired += judgeMatrixTrace(t, out)
			})
			if f.httpOnly {
				continue
			}
			t.Run("stdio/"+name+"/"+string(mode), func(t *testing.T) {
				ran++
				out := filepath.Join(t.TempDir(), "run.trace")
				args := []string{"proxy", "--seed", "1", "--record", out}
				if f.spec != "" {
					args = append(args, "--fault", f.spec)
				}
				args = append(args, "--", exe, "serve", "--stdio", "--poll-interval", "20ms", "--log-level", "error")
				runMatrixCall(t, &stdio.CommandTransport{Command: exe, Args: args, Stderr: os.Stderr}, mode)
				fired += judgeMatrixTrace(t, out)
			})
		}
		// A fault need not find its message in every mode (a POST stream
		// to cut exists only in streaming mode), but in some it must (of
		// those -run selected).
		if f.spec != "" && ran > 0 && fired == 0 {
			t.Errorf("fault %s never fired in any mode: the matrix does not test it", f.spec)
		}
	}
}

func runMatrixCall(t *testing.T, tr mcp.Transport, mode client.Mode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := client.New(nil).Connect(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Mode: mode,
		Args: map[string]any{"chunks": matrixChunks, "chunkSize": 10, "intervalMs": 5}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		text.WriteString(c.Text)
	}
	if !res.Complete || text.String() != matrixWant() {
		t.Fatalf("result %q (complete %v), want %q", text.String(), res.Complete, matrixWant())
	}
}

// judgeMatrixTrace checks the trace at path and returns how many fault
// records it holds.
func judgeMatrixTrace(t *testing.T, path string) int {
	t.Helper()
	r, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v, err := check.Check(r.Records(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("%d fault records", v.Faults)
	}
	if v.Failed() {
		var b strings.Builder
		_ = v.WriteText(&b)
		t.Errorf("trace check failed:\n%s", b.String())
	}
	return v.Faults
}

// TestProxyTTLExpiry: ttl-expiry rewrites the call's ttl to 30 ms while
// its tool runs for 400 ms: the task expires mid-stream, and the client
// ends the call with a correct, explained outcome (the task failed as
// expired, or ErrTaskExpired), never a result it did not get.
func TestProxyTTLExpiry(t *testing.T) {
	upstream, _ := refserver.Start(t, &server.Options{PollInterval: 20 * time.Millisecond})
	for _, mode := range matrixModes {
		t.Run(string(mode), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run.trace")
			u, stop, stderr := startProxy(t, "--upstream", upstream, "--seed", "1", "--record", out, "--fault", "ttl-expiry:ttl=30ms,method=tools/call")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess, err := client.New(nil).Connect(ctx, &streamhttp.ClientTransport{URL: u})
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.CallTool(ctx, client.CallOptions{Name: server.ToolSlowText, Mode: mode,
				Args: map[string]any{"chunks": 4, "chunkSize": 10, "intervalMs": 100}})
			sess.Close()
			switch {
			case errors.Is(err, client.ErrTaskExpired):
			case err == nil && res.Task != nil && res.Task.Status == mcp.StatusFailed && res.IsError:
			default:
				t.Fatalf("call under ttl-expiry ended with %v (result %+v); want the task expired", err, res)
			}
			if code := stop(); code != ExitOK {
				t.Fatalf("proxy exit code %d: %s", code, stderr.String())
			}
			if n := judgeMatrixTrace(t, out); n != 1 {
				t.Errorf("%d fault records, want the one rewrite", n)
			}
		})
	}
}
