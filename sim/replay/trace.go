package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasksim/tasksim/traces"
)

// replayTrace is the new trace of a replay as it is written. A replay
// never destroys a file it did not write:
//
//   - with ReplayOptions.Record naming a regular file, or a path that does
//     not exist yet, the trace is written to a new file beside it
//     (NAME.partial-N.trace) and renamed over it when the replay ends
//     having reached its target and recorded something, whatever else
//     happened (a divergence, a timeout, an interrupt: what was recorded
//     is kept). A target that cannot be reached or started, or bad input,
//     leaves the path as it was and removes the new file. A replay killed
//     mid-way leaves its recording, readable up to its last whole record,
//     under the .partial name;
//   - with Record naming a device or a pipe (/dev/null), the trace is
//     written there in place and nothing is renamed or removed;
//   - with no Record, the trace is a new file in the temporary directory,
//     removed when the replay ends with an error.
type replayTrace struct {
	*traces.Writer
	path string // where the trace is kept (ReplayResult.Trace)
	tmp  string // the file written until it is kept; "" when written at path
	own  bool   // path is a file the replay created (no Record given)
}

// createReplayTrace starts the replay's trace with header h, as
// replayTrace describes.
func createReplayTrace(record string, h traces.Header) (*replayTrace, error) {
	if record == "" {
		f, err := os.CreateTemp("", "tasksim-replay-*.trace")
		if err != nil {
			return nil, err
		}
		f.Close()
		w, err := traces.Create(f.Name(), h, nil)
		if err != nil {
			os.Remove(f.Name())
			return nil, err
		}
		return &replayTrace{Writer: w, path: f.Name(), own: true}, nil
	}
	target := record
	mode := fs.FileMode(0o644)
	fi, err := os.Stat(record)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory", record)
	case err == nil && !fi.Mode().IsRegular():
		// A device or a pipe: write in place.
		w, err := traces.Create(record, h, nil)
		if err != nil {
			return nil, err
		}
		return &replayTrace{Writer: w, path: record}, nil
	case err == nil:
		// Replace the file a symbolic link names, not the link.
		if real, err := filepath.EvalSymlinks(record); err == nil {
			target = real
		}
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	base := filepath.Base(target)
	ext := filepath.Ext(base)
	f, err := os.CreateTemp(filepath.Dir(target), strings.TrimSuffix(base, ext)+".partial-*"+ext)
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	err = f.Chmod(mode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	w, err := traces.Create(tmp, h, nil)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return &replayTrace{Writer: w, path: target, tmp: tmp}, nil
}

// finish closes the trace and keeps it or removes it, as replayTrace
// describes, given how the replay ended (runErr nil: it ran to its end).
// It returns runErr, or else the error of closing or keeping the trace.
func (t *replayTrace) finish(runErr error) error {
	err := t.Close()
	if err != nil {
		err = fmt.Errorf("trace %s: %w", t.path, err)
	}
	failed := runErr != nil || err != nil
	notRun := errors.Is(runErr, ErrUnreachable) || IsReplayInputError(runErr)
	switch {
	case t.own && failed:
		os.Remove(t.path)
	case t.tmp == "":
	case notRun || t.Written() == 0:
		os.Remove(t.tmp)
	default:
		if rerr := os.Rename(t.tmp, t.path); rerr != nil && err == nil {
			err = fmt.Errorf("trace %s: %w (the recording is in %s)", t.path, rerr, t.tmp)
		}
	}
	if runErr != nil {
		return runErr
	}
	return err
}
