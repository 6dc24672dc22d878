package child

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// tailKeep is how many of the last bytes a Tail keeps.
const tailKeep = 4096

// maxTailLine caps the line Last returns, in bytes.
const maxTailLine = 200

// Tail passes a child's stderr on to W and keeps its last line, for the
// error that tells why the child failed. A write error of W is ignored: a
// log that cannot be written must not end the child. The zero value (W
// nil) only keeps the line. Safe for concurrent use.
type Tail struct {
	W io.Writer

	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailKeep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
	}
	t.mu.Unlock()
	if t.W != nil {
		_, _ = t.W.Write(p)
	}
	return len(p), nil
}

// Last returns the last line written that is not blank, trimmed, cut at
// 200 bytes (with "…"); "" if none.
func (t *Tail) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimRight(t.buf, " \t\r\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	line := strings.TrimSpace(string(b))
	if len(line) > maxTailLine {
		cut := maxTailLine
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}
