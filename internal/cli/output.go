package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tasksim/tasksim/traces"
)

// outFile is an output file a command writes (-o, --json, --hlog, --html).
//
// A regular file, or a path that does not exist yet, is written through a
// temporary file beside it that commit renames over it: a command that
// fails leaves the path as it found it, and removes nothing it did not
// create. Anything else (a device such as /dev/null, a pipe, /dev/stdout)
// is written in place and never removed.
//
// Outputs are opened write-only: a read-write descriptor of a pipe
// (/dev/stdout when stdout is a pipe) holds the pipe's read end, so when
// the reader goes away the writer blocks forever on a full pipe instead
// of getting EPIPE.
type outFile struct {
	*os.File
	path string // the target
	tmp  string // the temporary file; "" when written in place
	done bool
}

// createOut opens path for writing as outFile describes.
func createOut(path string) (*outFile, error) {
	target := path
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if fi.IsDir() {
			return nil, usagef("%s: is a directory", path)
		}
		// A device or a pipe: write in place; O_TRUNC means nothing here.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &outFile{File: f, path: path}, nil
	case err == nil:
		// Replace the file a symbolic link names, not the link.
		if real, err := filepath.EvalSymlinks(path); err == nil {
			target = real
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	mode := fs.FileMode(0o644)
	if fi != nil {
		mode = fi.Mode().Perm()
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &outFile{File: f, path: target, tmp: f.Name()}, nil
}

// commit closes the file and, for a temporary file, syncs it and renames
// it over the target.
func (o *outFile) commit() error {
	if o == nil || o.done {
		return nil
	}
	o.done = true
	var err error
	if o.tmp != "" {
		err = o.Sync()
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if o.tmp == "" {
		return err
	}
	if err == nil {
		err = os.Rename(o.tmp, o.path)
	}
	if err != nil {
		os.Remove(o.tmp)
	}
	return err
}

// abort closes the file and removes the temporary file, leaving the target
// untouched. After commit it does nothing.
func (o *outFile) abort() {
	if o == nil || o.done {
		return
	}
	o.done = true
	o.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// openInput opens an input file. A missing, unreadable or directory path
// is bad input (exit 2), whatever the command.
func openInput(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, &UsageError{Err: err}
		}
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, usagef("%s: is a directory, not a file", path)
	}
	return f, nil
}

// traceFile is a trace a command records in place (a killed recorder must
// leave a readable file at the path, so no temporary file), opened
// write-only for the reason outFile gives.
type traceFile struct {
	*traces.Writer
	f *os.File
}

// createTraceFile creates or truncates path and starts a trace in it.
func createTraceFile(path string, h traces.Header, opts *traces.WriterOptions) (*traceFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, err
	}
	w, err := traces.NewWriter(f, h, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &traceFile{Writer: w, f: f}, nil
}

// Close closes the trace, then syncs and closes the file. Closing twice is
// not an error.
func (t *traceFile) Close() error {
	err := t.Writer.Close()
	if t.f == nil {
		return err
	}
	if err == nil {
		if serr := t.f.Sync(); serr != nil && !errors.Is(serr, syscall.EINVAL) {
			err = fmt.Errorf("sync trace: %w", serr)
		}
	}
	if cerr := t.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close trace: %w", cerr)
	}
	t.f = nil
	return err
}

// checkOutPath checks, before a command writes anything, that a file can
// be written at the path its flag names: it is not a directory, and the
// directory it would be in exists. Either is a usage error.
func checkOutPath(flag, path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return usagef("%s %s: is a directory", flag, path)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return usagef("%s %s: %v", flag, path, pathErr(err))
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("%s %s: no directory %s to write it in", flag, path, dir)
	}
	return nil
}

// pathErr is the cause of a *fs.PathError, whose text repeats the path.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeOutput runs write on stdout ("-") or on the file at path, which
// is replaced only when write succeeds (see outFile).
func writeOutput(st *State, path string, write func(io.Writer) error) error {
	if path == "-" || path == "" {
		return write(st.Stdout)
	}
	f, err := createOut(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.abort()
		return err
	}
	return f.commit()
}

// same reports whether two paths name the same file.
func same(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	aa, _ := filepath.Abs(a)
	ab, _ := filepath.Abs(b)
	return aa == ab
}
