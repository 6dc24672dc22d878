package cli

import (
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"

	"github.com/tasksim/tasksim/load"
)

// loadProfiles are tasksim load's --cpuprofile and --memprofile: Go
// profiles of the generator's own process (with --in-process, of the
// server too), for `go tool pprof`.
//
// The CPU profile covers load.Run, connecting included. The heap profile
// is taken when the schedule ends (the first progress report that says
// the run is draining), after a collection: that is when the most tasks
// are in flight in a run at a steady rate, so inuse_space shows what the
// open tasks and streams hold, and alloc_space what the run allocated
// until then. A run that ends before any such report is profiled at its
// end.
type loadProfiles struct {
	cpu, mem *output
	memOnce  sync.Once
	memDone  chan struct{}
	memErr   error
}

// startLoadProfiles creates the files and starts the CPU profile.
func startLoadProfiles(st *State, o *LoadOptions) (*loadProfiles, error) {
	p := &loadProfiles{memDone: make(chan struct{})}
	for flag, name := range map[string]string{"--cpuprofile": o.CPUProfile, "--memprofile": o.MemProfile} {
		if name == "-" {
			return nil, usagef("%s: give a file (a profile is binary)", flag)
		}
	}
	var err error
	if o.CPUProfile != "" {
		if p.cpu, err = createOutput(st, o.CPUProfile); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(p.cpu.w); err != nil {
			p.cpu.abort()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	if o.MemProfile != "" {
		if p.mem, err = createOutput(st, o.MemProfile); err != nil {
			p.abort()
			return nil, err
		}
	}
	return p, nil
}

// progress wraps f: the first report of a draining run writes the heap
// profile, in its own goroutine, so that the collector is not held up.
func (p *loadProfiles) progress(f func(load.Progress)) func(load.Progress) {
	if p.mem == nil {
		return f
	}
	return func(pr load.Progress) {
		if pr.Draining {
			p.memOnce.Do(func() { go p.writeHeap() })
		}
		f(pr)
	}
}

func (p *loadProfiles) writeHeap() {
	defer close(p.memDone)
	runtime.GC() // the profile shows the heap as of the last collection
	if err := pprof.Lookup("heap").WriteTo(p.mem.w, 0); err != nil {
		p.memErr = fmt.Errorf("write %s: %w", p.mem.f.path, err)
	}
}

// finish stops the CPU profile, writes the heap profile if no report
// did, and commits both files.
func (p *loadProfiles) finish() error {
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.close(); err != nil {
			return err
		}
	}
	if p.mem != nil {
		p.memOnce.Do(p.writeHeap)
		<-p.memDone
		if p.memErr != nil {
			return p.memErr
		}
		return p.mem.close()
	}
	return nil
}

// abort drops files not committed (a run that did not start).
func (p *loadProfiles) abort() {
	if p.cpu != nil {
		pprof.StopCPUProfile() // a no-op once stopped
	}
	p.cpu.abort()
	p.mem.abort()
}
