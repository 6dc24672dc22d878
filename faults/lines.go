package faults

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/tasksim/tasksim/clock"
	"github.com/tasksim/tasksim/mcp"
	rev "github.com/tasksim/tasksim/mcp/rev20260728"
	"github.com/tasksim/tasksim/mcp/stdio"
	"github.com/tasksim/tasksim/traces"
)

// maxLineLen is the longest line Lines takes as one message, without its
// line ending: the longest a stdio server takes. A longer line passes
// unchanged, in pieces as it comes, unseen by the faults (Set.Oversize
// counts it).
const maxLineLen = stdio.DefaultMaxLine

// Lines is the stdio place: it copies the NDJSON lines of src to dst with
// set's faults applied, each line a message of stream (StreamStdin, the
// client's lines to the server, or StreamStdout, the server's to the
// client; also its StreamID), numbered from 1. Lines pass byte-exact,
// line ending included; blank lines pass and are no message, and so do
// lines over stdio.DefaultMaxLine, as they come (Set.Oversize counts them).
//
//	src ──line──▶ Decide ──▶ drop │ duplicate │ delay │ hold │ cut │ stall │ rewrite ──▶ dst
//
// A cut stops copying and closes dst (if it is an io.Closer; at=mid
// writes half the line first) and returns ErrCut; a stall stops copying
// without closing dst and returns ctx's error once ctx ends. A held line
// goes out after the next line, or when src ends. Lines returns nil when
// src ends, ctx's error when ctx ends (looked at between lines: a read
// that blocks is not interrupted), or the first error of dst or src.
func Lines(ctx context.Context, dst io.Writer, src io.Reader, set *Set, stream string, opts *PlaceOptions) error {
	l := &lineCopier{ctx: ctx, dst: dst, set: set, stream: stream, dir: traces.DirClientToServer}
	if opts != nil {
		l.o = *opts
	}
	l.o.Clock = clock.Or(l.o.Clock)
	if stream == StreamStdout {
		l.dir = traces.DirServerToClient
	}
	if l.o.Eras == nil {
		l.o.Eras = new(rev.Eras)
	}
	br := bufio.NewReaderSize(src, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			if err := l.gather(line); err != nil {
				return err
			}
			continue
		}
		if done, err := l.end(line, rerr); done || err != nil {
			return err
		}
	}
}

// lineCopier is the state of one Lines call between the lines it reads.
type lineCopier struct {
	ctx    context.Context
	dst    io.Writer
	set    *Set
	o      PlaceOptions
	stream string
	dir    traces.Direction

	held []byte // a line a Hold keeps back; nil: none
	n    int    // the messages so far
	long []byte // the line so far, when it outgrew the reader's buffer
	over bool   // the line is over maxLineLen: it passes as it comes
}

func (l *lineCopier) write(p []byte) error {
	_, err := l.dst.Write(p)
	return err
}

// release writes the held line, if any.
func (l *lineCopier) release() error {
	if l.held == nil {
		return nil
	}
	err := l.write(l.held)
	l.held = nil
	return err
}

// cut closes dst, if it is an io.Closer, and returns ErrCut.
func (l *lineCopier) cut() error {
	if c, ok := l.dst.(io.Closer); ok {
		c.Close()
	}
	return ErrCut
}

// gather takes a piece of a line that filled the reader's buffer: it
// keeps it until the line is too long to be a message, then passes the
// line on as it comes.
func (l *lineCopier) gather(piece []byte) error {
	if !l.over {
		l.long = append(l.long, piece...)
		if len(bytes.TrimRight(l.long, "\r")) <= maxLineLen {
			return nil
		}
		l.set.passOversize()
		l.over, piece = true, l.long
	}
	if err := l.write(piece); err != nil {
		return err
	}
	l.long = l.long[:0]
	return nil
}

// end takes the end of a line, with the reader's error: io.EOF when the
// line is the last (or empty, at the end of src). It reports done when
// copying stops, with the error Lines returns.
func (l *lineCopier) end(line []byte, rerr error) (done bool, err error) {
	if l.over {
		// The end of a line too long to be a message.
		l.over = false
		if err := l.write(line); err != nil {
			return true, err
		}
		if rerr != nil {
			return true, errors.Join(l.release(), ignoreEOF(rerr))
		}
		return false, nil
	}
	if len(l.long) > 0 {
		line = append(l.long, line...)
		l.long = l.long[:0]
	}
	if rerr != nil && rerr != io.EOF {
		return true, errors.Join(l.release(), rerr)
	}
	if len(line) == 0 {
		return true, l.release()
	}
	msg := bytes.TrimRight(line, "\r\n")
	switch {
	case len(msg) > maxLineLen:
		// Too long to be a message, though it came at once.
		l.set.passOversize()
		err = l.write(line)
	case len(msg) == 0:
		// A blank line passes and is no message; what follows it, even
		// at the end of src, is read next.
		return false, l.write(line)
	default:
		err = l.message(line, msg)
	}
	if err != nil {
		return true, err
	}
	if rerr == io.EOF {
		return true, l.release()
	}
	return false, nil
}

// message applies the faults to one line, msg without its line ending.
func (l *lineCopier) message(line, msg []byte) error {
	l.n++
	m := NewMsg(PlaceStdio, l.stream, l.stream, l.n, l.dir, msg)
	if m.RPC != nil {
		m.Revision = l.o.Eras.FromLine(l.dir == traces.DirClientToServer, mcp.ParseKind(m.RPC.Type), m.RPC.Method, m.RPC.ID, msg)
	}
	out, err := l.o.carryOut(l.ctx, l.set.Decide(m))
	if err != nil {
		return err
	}
	if out.rewrite != nil {
		line = append(append([]byte(nil), out.rewrite...), line[len(msg):]...)
	}
	w, err := l.fate(out.fate, line)
	if err != nil || w == nil {
		return err
	}
	if err := l.write(w); err != nil {
		return err
	}
	return l.release()
}

// fate carries out the verb that decides the line's fate: it returns what
// to write now (nil: nothing), or the error that stops copying.
func (l *lineCopier) fate(v Verb, line []byte) ([]byte, error) {
	switch v {
	case Drop:
		return nil, nil
	case Duplicate:
		return append(append([]byte(nil), line...), line...), nil
	case Hold:
		if l.held == nil {
			l.held = append([]byte(nil), line...)
			return nil, nil
		}
		return line, nil
	case CutBefore:
		return nil, l.cut()
	case CutMid:
		_, _ = l.dst.Write(line[:len(line)/2])
		return nil, l.cut()
	case CutAfter:
		if err := l.write(line); err != nil {
			return nil, err
		}
		if err := l.release(); err != nil {
			return nil, err
		}
		return nil, l.cut()
	case Stall:
		<-l.ctx.Done()
		return nil, l.ctx.Err()
	}
	return line, nil
}

// ignoreEOF is err, or nil for the end of the input.
func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}
