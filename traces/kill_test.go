package traces

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The tests below run the test binary again as a writer process
// ("child"), and kill it.
const childEnv = "TASKSIM_TRACES_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode, os.Getenv("TASKSIM_TRACES_FILE")))
	}
	os.Exit(m.Run())
}

// childRecord is the i-th record a child writes.
func childRecord(i int) Record {
	r := sseRecord(i)
	if i%7 == 3 {
		r.Raw = append(r.Raw, bytes.Repeat([]byte("x"), 40*i%3000)...)
	}
	return r
}

// childClock is the deterministic clock of the child's writer.
func childClock() func() time.Time { return stepClock(time.Millisecond) }

// stallingFile writes up to limit bytes in total, then reports "cut" on
// stdout and blocks forever: the process is killed in the middle of a
// write, at a known byte.
type stallingFile struct {
	f       *os.File
	limit   int64
	written int64
}

func (s *stallingFile) Write(p []byte) (int, error) {
	if s.written+int64(len(p)) <= s.limit {
		n, err := s.f.Write(p)
		s.written += int64(n)
		return n, err
	}
	n, _ := s.f.Write(p[:s.limit-s.written])
	s.written += int64(n)
	fmt.Println("cut")
	select {}
}

func runChild(mode, path string) int {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	switch mode {
	case "kill":
		limit, _ := strconv.ParseInt(os.Getenv("TASKSIM_TRACES_LIMIT"), 10, 64)
		w, err := NewWriter(&stallingFile{f: f, limit: limit}, sampleHeader(),
			&WriterOptions{FlushInterval: time.Millisecond, Now: childClock()})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		for i := 0; ; i++ {
			if err := w.Write(childRecord(i)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
		}
	case "term":
		// The CLI's pattern: a context that ends on SIGTERM closes the
		// writer while producers are still writing.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		w, err := NewWriter(f, sampleHeader(), &WriterOptions{FlushInterval: -1})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		closed := make(chan error, 1)
		context.AfterFunc(ctx, func() { closed <- w.Close() })
		n := 0
		for ; ; n++ {
			if n == 1000 {
				fmt.Println("ready")
			}
			if err := w.Write(childRecord(n)); errors.Is(err, ErrClosed) {
				break
			} else if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			if n >= 1000 {
				time.Sleep(time.Millisecond)
			}
		}
		if err := <-closed; err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Printf("wrote %d\n", n)
		return 0
	}
	return 2
}

// startChild runs the test binary as a writer and returns it with its
// stdout.
func startChild(t *testing.T, mode, path string, env ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+mode, "TASKSIM_TRACES_FILE="+path)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(out)
}

func expectLine(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil || len(line) < len(want) || line[:len(want)] != want {
		t.Fatalf("child said %q (%v), want %q", line, err, want)
	}
	return line
}

// A writer killed with SIGKILL in the middle of a write leaves a file
// that reads back up to its last whole record; Verify says where it was
// cut.
func TestKilledWriter(t *testing.T) {
	const limit = 200_003 // not a frame boundary
	path := t.TempDir() + "/killed.trace"
	cmd, out := startChild(t, "kill", path, "TASKSIM_TRACES_LIMIT="+strconv.Itoa(limit))
	expectLine(t, out, "cut")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed", err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != limit {
		t.Fatalf("file has %d bytes, want %d", len(data), limit)
	}
	// The same records with the same clock, written whole.
	var full bytes.Buffer
	w, _ := NewWriter(&full, sampleHeader(), &WriterOptions{Now: childClock(), FlushInterval: -1})
	for i := 0; full.Len()+w.out.Buffered() < 2*limit; i++ {
		w.Write(childRecord(i))
	}
	w.Close()
	if !bytes.Equal(data, full.Bytes()[:limit]) {
		t.Fatal("the killed writer's bytes differ from a whole writer's")
	}
	ends := frameEnds(t, full.Bytes())
	whole := 0
	for whole+1 < len(ends) && ends[whole+1] <= limit {
		whole++
	}
	cutAt := ends[whole] // start of the first record that is not whole

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for rec, err := range r.Records() {
		if err != nil {
			var te *TruncatedError
			if !errors.As(err, &te) || te.Index != uint64(whole) || te.Offset != cutAt {
				t.Fatalf("after %d records: %v; want cut at record %d, byte %d", n, err, whole, cutAt)
			}
			break
		}
		if wantRaw := childRecord(n).Raw; rec.Index != uint64(n) || !bytes.Equal(rec.Raw, wantRaw) {
			t.Fatalf("record %d: index %d raw %.40q", n, rec.Index, rec.Raw)
		}
		n++
	}
	if n != whole || whole < 100 {
		t.Fatalf("read %d whole records, want %d", n, whole)
	}
	f, _ := os.Open(path)
	defer f.Close()
	v, err := Verify(f)
	if err != nil || v.OK() || v.Truncated == nil || v.Truncated.Index != uint64(whole) || v.Size != cutAt || v.Records != uint64(whole) {
		t.Fatalf("Verify: %+v, %v", v, err)
	}
}

// On SIGTERM the writer is closed through the context and loses nothing
// that was written, although it never flushed on a timer.
func TestTerminatedWriterKeepsRecords(t *testing.T) {
	path := t.TempDir() + "/term.trace"
	cmd, out := startChild(t, "term", path)
	expectLine(t, out, "ready")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	line := expectLine(t, out, "wrote ")
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	var wrote int
	fmt.Sscanf(line, "wrote %d", &wrote)
	f, _ := os.Open(path)
	defer f.Close()
	v, err := Verify(f)
	if err != nil || !v.OK() || v.Records != uint64(wrote) || wrote < 1000 {
		t.Fatalf("Verify: %+v, %v; child wrote %d", v, err, wrote)
	}
}
