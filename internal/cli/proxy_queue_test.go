package cli

import (
	"io"
	"testing"
	"testing/synctest"
)

// TestQueueBounded: the stdio proxy's queue of the server's output holds
// at most its bound for a client that does not read; the server's write
// waits for the reader past it, and ends at once when the reader is gone.
func TestQueueBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(4)
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := q.Write([]byte("abcdef"))
			done <- result{n, err}
		}()
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Write of 6 bytes into a queue of 4 returned %d, %v before a read", r.n, r.err)
		default:
		}
		q.mu.Lock()
		held := len(q.buf)
		q.mu.Unlock()
		if held != 4 {
			t.Fatalf("queue holds %d bytes, want its bound 4", held)
		}
		buf := make([]byte, 16)
		n, err := q.Read(buf)
		if err != nil || string(buf[:n]) != "abcd" {
			t.Fatalf("Read = %q, %v; want abcd", buf[:n], err)
		}
		synctest.Wait()
		if r := <-done; r.n != 6 || r.err != nil {
			t.Fatalf("Write = %d, %v; want 6, nil", r.n, r.err)
		}
		n, err = q.Read(buf)
		if err != nil || string(buf[:n]) != "ef" {
			t.Fatalf("Read = %q, %v; want ef", buf[:n], err)
		}

		// A writer waiting on a full queue is let go when the reader leaves.
		if _, err := q.Write([]byte("wxyz")); err != nil {
			t.Fatal(err)
		}
		go func() {
			n, err := q.Write([]byte("more"))
			done <- result{n, err}
		}()
		synctest.Wait()
		select {
		case r := <-done:
			t.Fatalf("Write into a full queue returned %d, %v", r.n, r.err)
		default:
		}
		q.discard()
		if r := <-done; r.n != 4 || r.err != nil {
			t.Fatalf("Write after discard = %d, %v; want 4, nil", r.n, r.err)
		}

		// Close ends the reader after what is queued, and a waiting writer.
		q = newQueue(2)
		if _, err := q.Write([]byte("ab")); err != nil {
			t.Fatal(err)
		}
		go func() {
			n, err := q.Write([]byte("c"))
			done <- result{n, err}
		}()
		synctest.Wait()
		q.Close()
		if r := <-done; r.err != io.ErrClosedPipe {
			t.Fatalf("Write after Close = %d, %v; want io.ErrClosedPipe", r.n, r.err)
		}
		if n, err := q.Read(buf); string(buf[:n]) != "ab" || err != nil {
			t.Fatalf("Read after Close = %q, %v; want ab", buf[:n], err)
		}
		if _, err := q.Read(buf); err != io.EOF {
			t.Fatalf("Read at the end = %v, want EOF", err)
		}
	})
}
