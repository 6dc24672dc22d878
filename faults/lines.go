package faults

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/tasksim/tasksim/clock"
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
	var o PlaceOptions
	if opts != nil {
		o = *opts
	}
	o.Clock = clock.Or(o.Clock)
	dir := traces.DirClientToServer
	if stream == StreamStdout {
		dir = traces.DirServerToClient
	}
	br := bufio.NewReaderSize(src, 64<<10)
	var held []byte
	n := 0
	release := func() error {
		if held == nil {
			return nil
		}
		_, err := dst.Write(held)
		held = nil
		return err
	}
	cut := func() error {
		if c, ok := dst.(io.Closer); ok {
			c.Close()
		}
		return ErrCut
	}
	var long []byte // the line so far, when it outgrew the reader's buffer
	over := false   // the line is over maxLineLen: it passes as it comes
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) {
			if !over {
				long = append(long, line...)
				if len(bytes.TrimRight(long, "\r")) <= maxLineLen {
					continue
				}
				set.passOversize()
				over, line = true, long
			}
			if _, err := dst.Write(line); err != nil {
				return err
			}
			long = long[:0]
			continue
		}
		if over {
			// The end of a line too long to be a message.
			over = false
			if _, err := dst.Write(line); err != nil {
				return err
			}
			if rerr != nil {
				return errors.Join(release(), ignoreEOF(rerr))
			}
			continue
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		if rerr != nil && rerr != io.EOF {
			return errors.Join(release(), rerr)
		}
		if len(line) == 0 {
			return release()
		}
		msg := bytes.TrimRight(line, "\r\n")
		if len(msg) > maxLineLen {
			// Too long to be a message, though it came at once.
			set.passOversize()
			if _, err := dst.Write(line); err != nil {
				return err
			}
			if rerr == io.EOF {
				return release()
			}
			continue
		}
		if len(msg) == 0 {
			if _, err := dst.Write(line); err != nil {
				return err
			}
			continue
		}
		n++
		m := NewMsg(PlaceStdio, stream, stream, n, dir, msg)
		out, err := o.carryOut(ctx, set.Decide(m))
		if err != nil {
			return err
		}
		if out.rewrite != nil {
			line = append(append([]byte(nil), out.rewrite...), line[len(msg):]...)
		}
		var w []byte
		switch out.fate {
		case Drop:
		case Duplicate:
			w = append(append(w, line...), line...)
		case Hold:
			if held == nil {
				held = append([]byte(nil), line...)
			} else {
				w = line
			}
		case CutBefore:
			return cut()
		case CutMid:
			_, _ = dst.Write(line[:len(line)/2])
			return cut()
		case CutAfter:
			if _, err := dst.Write(line); err != nil {
				return err
			}
			if err := release(); err != nil {
				return err
			}
			return cut()
		case Stall:
			<-ctx.Done()
			return ctx.Err()
		default:
			w = line
		}
		if w != nil {
			if _, err := dst.Write(w); err != nil {
				return err
			}
			if err := release(); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return release()
		}
	}
}

// ignoreEOF is err, or nil for the end of the input.
func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}
