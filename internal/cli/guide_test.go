package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// guideCommand is one "$ " line of docs/guide.md and the output shown
// under it.
type guideCommand struct {
	line string   // as written
	want []string // the output lines shown ("..." left out)
	exit int      // "# exit N" at the end of the line; else 0
}

// guideCommands reads the console blocks of the guide in order.
func guideCommands(t *testing.T, text string) []guideCommand {
	t.Helper()
	var out []guideCommand
	exitRE := regexp.MustCompile(`\s+#\s*exit (\d+)$`)
	for _, block := range strings.Split(text, "```console\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
			cmd, ok := strings.CutPrefix(line, "$ ")
			switch {
			case ok:
				c := guideCommand{line: cmd}
				if m := exitRE.FindStringSubmatch(cmd); m != nil {
					c.exit, _ = strconv.Atoi(m[1])
					c.line = strings.TrimSpace(cmd[:len(cmd)-len(m[0])])
				}
				out = append(out, c)
			case len(out) == 0:
				t.Fatalf("output before the first command: %q", line)
			case line != "..." && strings.TrimSpace(line) != "":
				out[len(out)-1].want = append(out[len(out)-1].want, line)
			}
		}
	}
	return out
}

// Shapes: what varies from run to run (ids, times, sizes, counts, ports)
// is replaced by one token each, and runs of spaces by one.
var (
	shapeUUID   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	shapeTime   = regexp.MustCompile(`\d+(\.\d+)?(ns|us|µs|ms|s|m|h)\b`)
	shapeSize   = regexp.MustCompile(`\d+(\.\d+)? ?(B|kB|KiB|MB|MiB)\b`)
	shapeNumber = regexp.MustCompile(`\d+(\.\d+)?`)
	shapeSpace  = regexp.MustCompile(`\s+`)
)

func shape(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), "…")
	s = shapeUUID.ReplaceAllString(s, "ID")
	s = shapeTime.ReplaceAllString(s, "T")
	s = shapeSize.ReplaceAllString(s, "SIZE")
	s = shapeNumber.ReplaceAllString(s, "N")
	return shapeSpace.ReplaceAllString(s, " ")
}

// matchShapes reports the first wanted line that no line of got holds,
// by shape, in order.
func matchShapes(want []string, got string) (string, bool) {
	lines := strings.Split(got, "\n")
	i := 0
	for _, w := range want {
		sw := shape(w)
		for i < len(lines) && !strings.Contains(shape(lines[i]), sw) {
			i++
		}
		if i == len(lines) {
			return w, false
		}
		i++
	}
	return "", true
}

// guideJob is a command the guide runs in the background (&).
type guideJob struct {
	line   string
	stop   context.CancelFunc
	done   chan int
	stderr *syncBuffer
}

// serveURL is the line serve, record and proxy log once they listen.
var serveURL = regexp.MustCompile(`msg=(?:serving|proxying|recording) url=http://(\S+)/mcp`)

// TestGuideStories runs docs/guide.md as a user would paste it, command
// by command, in one directory: tasksim's commands in-process, the
// background ones (&) until their "kill %%". Ports the guide names
// (127.0.0.1:7070...) become free ones, and later commands use them.
// Each command's exit code is the one the guide says (0 unless "# exit
// N"), and the output shown under it appears in stdout or stderr, line by
// line in order, by shape: ids, times, sizes and counts vary.
func TestGuideStories(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds of load and the check suite")
	}
	b, err := os.ReadFile("../../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := guideCommands(t, string(b))
	t.Chdir(t.TempDir())
	ports := map[string]string{} // the guide's host:port -> the live one
	var jobs []*guideJob
	t.Cleanup(func() {
		for _, j := range jobs {
			j.stop()
			<-j.done
		}
	})
	portRE := regexp.MustCompile(`127\.0\.0\.1:70\d\d`)
	for _, c := range cmds {
		line := c.line
		if strings.HasPrefix(line, "go ") {
			continue // building tasksim: the test is tasksim
		}
		if line == "kill %%" {
			if len(jobs) == 0 {
				t.Fatalf("%q: no job running", line)
			}
			j := jobs[len(jobs)-1]
			jobs = jobs[:len(jobs)-1]
			j.stop()
			if code := <-j.done; code != ExitOK {
				t.Errorf("%q: exit %d:\n%s", j.line, code, j.stderr.String())
			}
			if w, ok := matchShapes(c.want, j.stderr.String()); !ok {
				t.Errorf("%q ended without %q:\n%s", j.line, w, j.stderr.String())
			}
			continue
		}
		background := strings.HasSuffix(line, " &")
		line = strings.TrimSuffix(line, " &")
		words, err := splitCommand(line)
		if err != nil || len(words) < 2 || words[0] != "tasksim" {
			t.Fatalf("%q: not a tasksim command (%v)", c.line, err)
		}
		args := words[1:]
		listens := ""
		for i, a := range args {
			if m := portRE.FindString(a); m != "" {
				if i > 0 && (args[i-1] == "--addr" || args[i-1] == "--listen") {
					listens, args[i] = m, "127.0.0.1:0"
				} else if live, ok := ports[m]; ok {
					args[i] = strings.ReplaceAll(a, m, live)
				} else {
					t.Fatalf("%q: %s is not listened on by a command before it", c.line, m)
				}
			}
		}
		if background {
			ctx, stop := context.WithCancel(context.Background())
			j := &guideJob{line: line, stop: stop, done: make(chan int, 1), stderr: &syncBuffer{}}
			st := &State{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: j.stderr, Args: args,
				Getenv: func(string) string { return "" }, Context: ctx}
			go func() { j.done <- Main(st) }()
			jobs = append(jobs, j)
			live := j.stderr.await(t, serveURL, j.done)
			if listens != "" {
				ports[listens] = live
			}
			if w, ok := matchShapes(c.want, j.stderr.String()); !ok {
				t.Errorf("%q: no %q in:\n%s", line, w, j.stderr.String())
			}
			continue
		}
		code, stdout, stderr := run(t, "", args...)
		if code != c.exit {
			t.Errorf("%q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", line, code, c.exit, stdout, stderr)
			continue
		}
		if w, ok1 := matchShapes(c.want, stdout+"\n"+stderr); !ok1 {
			if w2, ok2 := matchShapes(c.want, stderr+"\n"+stdout); !ok2 {
				t.Errorf("%q: output lacks %q (by shape %q), or %q in the other order\nstdout:\n%s\nstderr:\n%s", line, w, shape(w), w2, stdout, stderr)
			}
		}
	}
	if len(jobs) != 0 {
		t.Errorf("the guide leaves %d jobs running", len(jobs))
	}
	for _, f := range []string{"run.trace", "f.trace", "faults.xml", "report.xml", "load.html"} {
		if _, err := os.Stat(filepath.Join(".", f)); err != nil {
			t.Errorf("the guide should leave %s: %v", f, err)
		}
	}
}
