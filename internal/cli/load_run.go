package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/tasksim/tasksim/dashboards"
	"github.com/tasksim/tasksim/load"
)

func runLoad(ctx context.Context, st *State, o *LoadOptions) error {
	cfg, thresholds, err := loadConfig(o)
	if err != nil {
		return err
	}
	header, err := loadHeader(st, o)
	if err != nil {
		return err
	}
	outs, err := createLoadOutputs(st, o)
	if err != nil {
		return err
	}
	defer outs.abort()

	targets, stopServers, err := startTargets(ctx, st, o, cfg)
	if err != nil {
		return err
	}
	defer stopServers()
	prof, err := startLoadProfiles(st, o)
	if err != nil {
		return err
	}
	defer prof.abort()
	tableOut := st.Stdout
	if o.JSON == "-" {
		tableOut = st.Stderr
	}
	if o.Intro != "" {
		fmt.Fprint(tableOut, o.Intro)
	}
	if o.Title != "" {
		fmt.Fprintln(st.Stderr, o.Title)
	}
	prog := newProgressPrinter(st, cfg)
	opts := load.Options{Targets: targets, Progress: prog.report, Version: Version, Header: header}
	stopLive, err := serveLoadLive(st, o, prog, &opts)
	if err != nil {
		return err
	}
	defer stopLive()
	if outs.hlog != nil {
		opts.Hlog = outs.hlog.w
	}
	opts.Progress = prof.progress(opts.Progress)
	res, runErr := load.Run(ctx, cfg, opts)
	prog.done()
	if err := prof.finish(); err != nil && res != nil {
		return err
	}
	if res == nil {
		if errors.Is(runErr, context.Canceled) {
			// Interrupted before the schedule started: nothing measured,
			// not a success either.
			return &InterruptedError{What: "load", Detail: "before the schedule started: nothing measured"}
		}
		return runErr // a *load.TargetError: the server cannot be loaded (exit 3)
	}
	stopServers()

	if err := reportLoad(ctx, o, tableOut, outs, res, runErr); err != nil {
		return err
	}
	return judgeLoad(st, o, res, runErr, thresholds)
}

// loadHeader checks the target flags and returns the header fields
// every request carries (--header, --bearer-token-env).
func loadHeader(st *State, o *LoadOptions) (http.Header, error) {
	if o.Server != "" && o.InProcess {
		return nil, usagef("give --server or --in-process, not both")
	}
	if o.Server != "" && !strings.HasPrefix(o.Server, "http://") && !strings.HasPrefix(o.Server, "https://") {
		return nil, usagef("--server %q: want an http:// or https:// URL", o.Server)
	}
	header, err := o.Header(st)
	if err != nil {
		return nil, err
	}
	if header != nil && o.Server == "" {
		return nil, usagef("--header and --bearer-token-env need --server (the reference server takes no credentials)")
	}
	return header, nil
}

// loadOutputs are the files of a load run (--json, --hlog, --html); nil
// for a flag not given.
type loadOutputs struct {
	json, hlog, html *output
}

// createLoadOutputs creates the output files before the run, so that a
// bad path fails before any load is sent.
func createLoadOutputs(st *State, o *LoadOptions) (*loadOutputs, error) {
	outs := &loadOutputs{}
	var err error
	if outs.json, err = createOutput(st, o.JSON); err != nil {
		return nil, err
	}
	if outs.hlog, err = createOutput(st, o.Hlog); err != nil {
		outs.abort()
		return nil, err
	}
	if outs.html, err = createOutput(st, o.HTML); err != nil {
		outs.abort()
		return nil, err
	}
	return outs, nil
}

// abort drops the files not committed, the last created first.
func (outs *loadOutputs) abort() {
	outs.html.abort()
	outs.hlog.abort()
	outs.json.abort()
}

// serveLoadLive serves --prom and --dashboard for the run, hooking them
// into opts; stop shuts both down.
func serveLoadLive(st *State, o *LoadOptions, prog *progressPrinter, opts *load.Options) (stop func(), err error) {
	stopProm := func() {}
	if o.Prom != "" {
		p := load.NewProm()
		mux := http.NewServeMux()
		mux.Handle("/metrics", p.Handler())
		if stopProm, err = serveLive(st, o.Prom, "--prom", "Prometheus metrics", "/metrics", mux); err != nil {
			return nil, err
		}
		opts.Observer = p
	}
	stopDashboard := func() {}
	if o.Dashboard != "" {
		live := dashboards.NewLive("tasksim load --mode " + o.Modes)
		if stopDashboard, err = serveLive(st, o.Dashboard, "--dashboard", "live dashboard", "/", live); err != nil {
			stopProm()
			return nil, err
		}
		opts.Progress = func(p load.Progress) { prog.report(p); live.Update(p) }
	}
	return func() { stopDashboard(); stopProm() }, nil
}

// reportLoad prints the table (and the summary and after-part of tasksim
// demo) and writes the output files of a run that measured something.
func reportLoad(ctx context.Context, o *LoadOptions, tableOut io.Writer, outs *loadOutputs, res *load.Result, runErr error) error {
	if err := load.TableReporter(res)(tableOut); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if o.Summary != nil {
		if err := o.Summary(tableOut, res); err != nil {
			return fmt.Errorf("write summary: %w", err)
		}
	}
	var sections []load.HTMLSection
	if o.After != nil && runErr == nil {
		var err error
		if sections, err = o.After(ctx, tableOut); err != nil {
			return err
		}
	}
	if outs.json != nil {
		if err := load.JSONReporter(res)(outs.json.w); err != nil {
			return fmt.Errorf("write %s: %w", o.JSON, err)
		}
		if err := outs.json.close(); err != nil {
			return err
		}
	}
	if outs.hlog != nil {
		if err := outs.hlog.close(); err != nil {
			return err
		}
	}
	if outs.html != nil {
		if err := load.HTMLPageReporter(res, &load.HTMLOptions{Title: o.HTMLTitle, Intro: o.HTMLIntro, Sections: sections})(outs.html.w); err != nil {
			return fmt.Errorf("write %s: %w", o.HTML, err)
		}
		if err := outs.html.close(); err != nil {
			return err
		}
		if o.HTML != "-" {
			fmt.Fprintln(tableOut, "report: "+o.HTML)
		}
	}
	return nil
}

// judgeLoad maps the run's end, its thresholds and its failure rate to
// the command's result.
func judgeLoad(st *State, o *LoadOptions, res *load.Result, runErr error, thresholds []load.Threshold) error {
	interrupted := errors.Is(runErr, context.Canceled)
	switch {
	case interrupted:
		// Thresholds are judged on what ran, as k6 does: a run cut short
		// whose figures already miss one is a finding (exit 1); one that
		// meets them is still not a pass (exit 130, ExitInterrupted).
	case errors.Is(runErr, load.ErrOverloaded):
		return fmt.Errorf("%w (the table shows what ran)", runErr)
	case runErr != nil:
		return runErr
	}
	checks, err := load.CheckThresholds(res, thresholds)
	if err != nil {
		return usagef("%v", err)
	}
	var missed []string
	for _, c := range checks {
		fmt.Fprintln(st.Stderr, "threshold "+c.String())
		if !c.Pass {
			missed = append(missed, c.Threshold.Expr)
		}
	}
	if len(missed) > 0 {
		what := ""
		if interrupted {
			what = "interrupted; "
		}
		return &FindingsError{Summary: fmt.Sprintf("%s%d of %d thresholds missed: %s", what, len(missed), len(checks), strings.Join(missed, ", "))}
	}
	if interrupted {
		// Tasks cut off by the interrupt count as failed: the failure
		// rate says nothing about the server here.
		return &InterruptedError{What: "load", Detail: "the table shows what ran (thresholds met so far)"}
	}
	return checkFailureRate(res, o.MaxFailureRate)
}

// serveLive serves h on addr (a bare :PORT binds loopback) for the run
// and says where on stderr; stop shuts it down.
func serveLive(st *State, addr, flag, what, path string, h http.Handler) (stop func(), err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usagef("%s %q: want HOST:PORT such as 127.0.0.1:9464", flag, addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err) // cannot listen: a runtime failure (exit 3)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Fprintf(st.Stderr, "load: %s at http://%s%s\n", what, ln.Addr(), path)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// output is a file the run writes, or stdout for "-".
type output struct {
	w io.Writer
	f *outFile
}

func createOutput(st *State, name string) (*output, error) {
	switch name {
	case "":
		return nil, nil
	case "-":
		return &output{w: st.Stdout}, nil
	}
	f, err := createOut(name)
	if err != nil {
		return nil, fmt.Errorf("create output: %w", err)
	}
	return &output{w: f, f: f}, nil
}

// close commits the file: it replaces name only now.
func (o *output) close() error {
	if o == nil || o.f == nil {
		return nil
	}
	if err := o.f.commit(); err != nil {
		return fmt.Errorf("write %s: %w", o.f.path, err)
	}
	return nil
}

// abort drops the file of a run that failed, unless it was committed.
func (o *output) abort() {
	if o != nil {
		o.f.abort()
	}
}
