package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/traces"
)

// StopGrace is how long RunStdio waits, after its context ended and it
// sent the child SIGTERM, before it kills the child.
const StopGrace = 5 * time.Second

// maxLine caps one recorded stdio line, without its line ending: the
// longest a stdio server takes, and the fault layer's bound. A longer line
// is recorded in parts of this size as it passes, and the rest with its
// end, each marked Oversize.
const maxLine = stdio.DefaultMaxLine

// RunStdio runs cmd, a stdio server, between stdin and stdout, and
// records every line that passes as a stdio-line record: "stdin" lines
// (client to server) and "stdout" lines (server to client), with the RPC
// fields of those that are JSON-RPC messages, and "stderr" lines, which are
// passed to stderr (direction none: they are not part of the protocol).
// Bytes are passed on as they arrive; a line is recorded when its newline
// passes: after it was passed on for stdout and stderr, just before for
// stdin, so that no answer is recorded before its request.
//
// When stdin ends, the child's stdin is closed. When ctx ends, the child
// gets SIGTERM and, StopGrace later, SIGKILL. RunStdio returns when the
// child exited and its stdout and stderr ended, with the child's exit code
// (128+n if signal n killed it); the error is for a child that could not
// start or a failed trace write. RunStdio does not wait for stdin to end,
// so a reader that never ends (a terminal) does not hold it up; lines read
// from it after the return are passed on but not recorded. The caller sets
// cmd's path, arguments, environment and directory, and closes w.
func RunStdio(ctx context.Context, cmd *exec.Cmd, stdin io.Reader, stdout, stderr io.Writer, w *traces.Writer) (exitCode int, err error) {
	p := NewPipeline(w, nil)
	code, err := RunStdioPipeline(ctx, cmd, stdin, stdout, stderr, p)
	if perr := p.Close(); err == nil {
		err = perr
	}
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	return code, err
}

// RunStdioPipeline is RunStdio recording into p, which others (a line
// fault layer, annotations) may add to as well: their records land in
// order with the lines. The child is connection 1. It returns once the
// child's records are added; the caller closes p, then its Writer.
func RunStdioPipeline(ctx context.Context, cmd *exec.Cmd, stdin io.Reader, stdout, stderr io.Writer, p *Pipeline) (exitCode int, err error) {
	rec := &stdioRecorder{p: p, opened: make(chan struct{})}
	out := &lineTee{dst: stdout, rec: rec, stream: "stdout", dir: traces.DirServerToClient, rpc: true}
	errw := &lineTee{dst: stderr, rec: rec, stream: "stderr", dir: traces.DirNone}
	cmd.Stdout, cmd.Stderr = out, errw
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return -1, fmt.Errorf("recorder: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		childIn.Close()
		return -1, fmt.Errorf("recorder: start %s: %w", cmd.Path, err)
	}
	rec.open(traces.Record{Wall: start, Kind: traces.KindConnOpen, Note: fmt.Sprintf("child pid %d: %s", cmd.Process.Pid, strings.Join(cmd.Args, " "))})

	go pumpStdin(stdin, childIn, rec)

	exited := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-exited:
			return
		case <-ctx.Done():
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(StopGrace):
			_ = cmd.Process.Kill()
		}
	}()
	waitErr := cmd.Wait()
	close(exited)
	<-stopped
	out.flush()
	errw.flush()

	code, note := exitStatus(cmd, waitErr)
	kind, end := traces.KindConnClose, traces.EndEOF
	if code != 0 {
		kind, end = traces.KindConnError, traces.EndServer
	}
	if ctx.Err() != nil {
		note += " (stopped by the recorder)"
		end = traces.EndStopped
	}
	rec.write(traces.Record{Kind: kind, Note: note, End: end})
	rec.close()
	werr := p.Sync()
	if code < 0 {
		return code, fmt.Errorf("recorder: %s: %w", cmd.Path, waitErr)
	}
	return code, werr
}

// exitStatus reads the child's exit code, as a shell reports it.
func exitStatus(cmd *exec.Cmd, waitErr error) (int, string) {
	ps := cmd.ProcessState
	if ps == nil {
		return -1, "wait: " + waitErr.Error()
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), "killed by signal: " + ws.Signal().String()
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		// The exit is known, but copying its output failed.
		return ps.ExitCode(), fmt.Sprintf("exit status %d; %v", ps.ExitCode(), waitErr)
	}
	return ps.ExitCode(), fmt.Sprintf("exit status %d", ps.ExitCode())
}

// pumpStdin passes stdin to the child and records its lines; it closes
// the child's stdin when stdin ends.
func pumpStdin(stdin io.Reader, childIn io.WriteCloser, rec *stdioRecorder) {
	in := &lineTee{dst: childIn, rec: rec, stream: "stdin", dir: traces.DirClientToServer, rpc: true, recordFirst: true}
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if _, werr := in.Write(buf[:n]); werr != nil {
				// The child is gone; keep recording what the client says.
				in.dst = io.Discard
			}
		}
		if err != nil {
			in.flush()
			note := "stdin closed"
			if err != io.EOF {
				note = "stdin failed: " + err.Error()
			}
			rec.write(traces.Record{Stream: "stdin", Dir: traces.DirClientToServer, Kind: traces.KindAnnotation, Note: note})
			childIn.Close()
			return
		}
	}
}

// stdioRecorder adds records until it is closed; records that come later
// (stdin read after the child's end) are dropped. The child's output may
// come before its pid is known: every record waits for the conn-open.
type stdioRecorder struct {
	p      *Pipeline
	opened chan struct{} // closed once the conn-open is added
	eras   rev.Eras      // the revision of each message

	mu     sync.Mutex
	closed bool
}

func (r *stdioRecorder) open(rec traces.Record) {
	r.put(rec)
	close(r.opened)
}

func (r *stdioRecorder) write(rec traces.Record) {
	if rec.Wall.IsZero() {
		rec.Wall = time.Now()
	}
	<-r.opened
	r.put(rec)
}

func (r *stdioRecorder) put(rec traces.Record) {
	rec.Conn = 1
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.p.Add(rec)
}

// revision returns the revision of a JSON-RPC line (docs/trace-format.md,
// "Revisions"). Only a client's request or notification is decoded, for
// its params' _meta.
func (r *stdioRecorder) revision(dir traces.Direction, p *traces.RPCFields, line []byte) string {
	return string(r.eras.FromLine(dir == traces.DirClientToServer, mcp.ParseKind(p.Type), p.Method, p.ID, line))
}

func (r *stdioRecorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
}

// lineTee passes bytes to dst and records each line that completes.
type lineTee struct {
	dst    io.Writer
	rec    *stdioRecorder
	stream string
	dir    traces.Direction
	rpc    bool // describe JSON-RPC lines
	// recordFirst records lines before passing them on. The stdin side
	// does: an answer can then never be recorded before its request,
	// which the child may answer before a goroutine that passed the
	// request got to record it.
	recordFirst bool

	mu   sync.Mutex
	line []byte
	over bool // the line is over maxLine: its parts were recorded
}

func (t *lineTee) Write(p []byte) (int, error) {
	if t.recordFirst {
		t.lines(p, time.Now())
		return t.dst.Write(p)
	}
	n, err := t.dst.Write(p)
	t.lines(p[:n], time.Now())
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// lines records the lines p completes and keeps the rest.
func (t *lineTee) lines(p []byte, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.line = append(t.line, rest...)
			t.parts(now)
			break
		}
		line := rest[:i]
		if len(t.line) > 0 {
			t.line = append(t.line, line...)
			line = t.line
		}
		if t.over || len(bytes.TrimRight(line, "\r")) > maxLine {
			t.line = append(t.line[:0], line...) // never p's bytes: parts moves them
			t.parts(now)
			t.over = false
			t.emit(t.line, now, "end of a line longer than the recorder keeps", true)
		} else {
			t.emit(line, now, "", false)
		}
		t.line = t.line[:0]
		rest = rest[i+1:]
	}
}

// parts records the parts of a line over maxLine that t.line holds, and
// keeps the rest.
func (t *lineTee) parts(now time.Time) {
	for len(bytes.TrimRight(t.line, "\r")) > maxLine {
		t.over = true
		t.emit(t.line[:maxLine], now, "part of a line longer than the recorder keeps", true)
		t.line = append(t.line[:0], t.line[maxLine:]...)
	}
}

// flush records a last line that no newline ended.
func (t *lineTee) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.line) > 0 {
		t.emit(t.line, time.Now(), "no newline at the end", t.over)
	}
	t.line, t.over = t.line[:0], false
}

func (t *lineTee) emit(line []byte, at time.Time, note string, oversize bool) {
	// The pipeline writes later: the record needs bytes of its own.
	line = bytes.Clone(line)
	r := traces.Record{Wall: at, Stream: t.stream, Dir: t.dir, Kind: traces.KindStdioLine, Raw: line, Note: note, Oversize: oversize}
	if t.rpc && !oversize {
		r.RPC = traces.DescribeMessage(line)
		if r.RPC != nil {
			r.Revision = t.rec.revision(t.dir, r.RPC, line)
		}
	}
	t.rec.write(r)
}
