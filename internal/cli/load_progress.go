package cli

import (
	"fmt"
	"io"
	"time"

	"golang.org/x/term"

	"github.com/tasksim/tasksim/load"
)

// progressPrinter shows progress on stderr: one updating line when stderr
// is a terminal, else a plain line per interval (a second) for runs up to
// a minute, per 10 intervals beyond (and when draining starts), as
// docs/load.md says.
type progressPrinter struct {
	st       *State
	every    int
	n        int
	live     bool
	warned   bool
	draining bool
	// width returns the terminal's width (0: unknown).
	width func() int
}

func newProgressPrinter(st *State, cfg load.Config) *progressPrinter {
	// The live line's escape codes go to stderr, so stderr decides, not
	// stdout: tasksim load >result.txt on a terminal still gets it, and
	// 2>log gets plain lines.
	p := &progressPrinter{st: st, live: isTerminalWriter(st.Stderr), every: 10,
		width: func() int { return terminalWidth(st.Stderr) }}
	d := time.Duration(cfg.Duration)
	if cfg.Concurrency == 0 && cfg.Tasks > 0 {
		// Bounded by task count, the open schedule's length is known too.
		if byCount := time.Duration(float64(cfg.Tasks) / cfg.Rate * float64(time.Second)); d == 0 || byCount < d {
			d = byCount
		}
	}
	if d > 0 && d <= time.Minute {
		p.every = 1
	}
	return p
}

// maxLiveLine is the live line's width when the terminal's is unknown.
const maxLiveLine = 150

// terminalWidth is the width of the terminal w writes to, 0 when unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	n, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return n
}

func (p *progressPrinter) report(pr load.Progress) {
	if pr.LagMax > load.LagWarning && !p.warned {
		p.warned = true
		if p.live {
			fmt.Fprint(p.st.Stderr, "\r\x1b[K")
		}
		fmt.Fprintf(p.st.Stderr, "load: warning: tasks started up to %s after their intended start: the generator is falling behind (latencies count from the intended start, so they include it)\n",
			load.FormatMs(float64(pr.LagMax)/1e6))
	}
	if p.live {
		// The line must not wrap: a wrapped line cannot be rewritten in
		// place. The terminal may be resized during the run, so its
		// width is read every time.
		width := maxLiveLine
		if p.width != nil {
			if w := p.width(); w > 0 {
				width = w - 1 // the cursor's column after the last rune
			}
		}
		line := pr.Bar(20)
		if r := []rune(line); len(r) > width {
			line = string(r[:max(width-1, 0)]) + "…"
		}
		fmt.Fprint(p.st.Stderr, "\r\x1b[K"+line)
		return
	}
	p.n++
	if p.n%p.every == 0 || pr.Draining && !p.draining {
		fmt.Fprintln(p.st.Stderr, "load: "+pr.Line())
	}
	p.draining = pr.Draining
}

func (p *progressPrinter) done() {
	if p.live {
		fmt.Fprint(p.st.Stderr, "\r\x1b[K")
	}
}

// isTerminalWriter reports whether w is a terminal: a file (os.Stderr) on a
// terminal device. Buffers, pipes and regular files are not.
func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
