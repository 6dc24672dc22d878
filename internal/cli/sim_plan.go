package cli

import (
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/mcp/client"
	"github.com/tasksim/tasksim/sim"
)

// simPlan is the runs the flags ask for: how many, and their schedules,
// drawn one at a time as the runs need them, so that memory does not
// grow with the number of seeds.
type simPlan struct {
	n         int
	schedules iter.Seq[sim.Schedule]
}

// simSchedules makes the schedules the flags ask for.
func simSchedules(o *SimOptions, seedsGiven bool) (simPlan, error) {
	seed, hasSeed, err := simSeed(o)
	if err != nil {
		return simPlan{}, err
	}
	wo, fo, err := simWorkload(o)
	if err != nil {
		return simPlan{}, err
	}
	if plan, ok, err := simFilePlan(o, seed, hasSeed); ok || err != nil {
		return plan, err
	}
	n := o.Seeds
	if hasSeed && !seedsGiven {
		n = 1
	}
	if !hasSeed {
		seed = 1
	}
	if o.Partition != "" {
		i, parts, err := parsePartition(o.Partition)
		if err != nil {
			return simPlan{}, err
		}
		seed, n = sim.Partition(seed, n, i, parts)
	}
	draw := func(yield func(sim.Schedule) bool) {
		for i := range n {
			if !yield(sim.Draw(seed+uint64(i), wo, fo)) {
				return
			}
		}
	}
	return simPlan{n: n, schedules: draw}, nil
}

// simSeed reads --seed (hasSeed says it was given) and checks --seeds.
func simSeed(o *SimOptions) (seed uint64, hasSeed bool, err error) {
	hasSeed = o.Seed != ""
	if hasSeed {
		if seed, err = strconv.ParseUint(strings.TrimSpace(o.Seed), 10, 64); err != nil {
			return 0, false, usagef("--seed %q: not a seed (want a number from 0 to %d)", o.Seed, uint64(1<<64-1))
		}
	}
	if o.Seeds < 1 {
		return 0, false, usagef("--seeds %d: want at least 1", o.Seeds)
	}
	return seed, hasSeed, nil
}

// simWorkload reads the flags every drawn schedule follows: the tasks,
// modes and transport, and the faults.
func simWorkload(o *SimOptions) (*sim.WorkloadOptions, *sim.FaultOptions, error) {
	if o.Tasks < 1 || o.Tasks > 1000 {
		return nil, nil, usagef("--tasks %d: want 1 to 1000", o.Tasks)
	}
	if o.FaultRate < 0 || o.FaultRate > 1 {
		return nil, nil, usagef("--fault-rate %v: want a probability from 0 to 1", o.FaultRate)
	}
	if o.Transport != "" && o.Transport != sim.TransportHTTP && o.Transport != sim.TransportStdio {
		return nil, nil, usagef("--transport %q: want http or stdio", o.Transport)
	}
	if o.NoFaults && len(o.Faults) > 0 {
		return nil, nil, usagef("--no-faults and --fault: choose one")
	}
	if o.Revision == "" {
		o.Revision = sim.Revision20251125
	}
	if err := sim.CheckRevision(o.Revision); err != nil {
		return nil, nil, usagef("--revision: %v", err)
	}
	fo := &sim.FaultOptions{Specs: o.Faults, Rate: o.FaultRate, None: o.NoFaults, Revision: o.Revision}
	if err := fo.Check(o.Transport); err != nil {
		return nil, nil, &UsageError{Err: err}
	}
	transport := o.Transport
	if transport == "" && fo.Transport() == sim.TransportHTTP {
		transport = sim.TransportHTTP // a fault of the HTTP place: every run over HTTP
	}
	if o.Revision == sim.Revision20260728 {
		deliveries, err := simDeliveries(o.Modes)
		if err != nil {
			return nil, nil, err
		}
		return &sim.WorkloadOptions{Revision: o.Revision, Deliveries: deliveries, Tasks: o.Tasks, Transport: transport}, fo, nil
	}
	var modes []client.Mode
	for _, m := range o.Modes {
		mode, err := client.ParseMode(m)
		if err != nil {
			return nil, nil, usagef("--mode: %v", err)
		}
		modes = append(modes, mode)
	}
	return &sim.WorkloadOptions{Modes: modes, Tasks: o.Tasks, Transport: transport}, fo, nil
}

// simDeliveries reads --mode of a run of 2026-07-28: how its calls
// follow their tasks.
func simDeliveries(modes []string) ([]string, error) {
	var out []string
	for _, m := range modes {
		m = strings.TrimSpace(m)
		if !slices.Contains(sim.Deliveries(), m) {
			return nil, usagef("--mode %q: a %s run follows its tasks by %s", m, sim.Revision20260728, strings.Join(sim.Deliveries(), " or "))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// simFilePlan is the plan of --schedule or --corpus; ok is false when
// neither is given. --seed, when given, replaces a --schedule's seed.
func simFilePlan(o *SimOptions, seed uint64, hasSeed bool) (plan simPlan, ok bool, err error) {
	switch {
	case o.Partition != "" && (o.Schedule != "" || o.Corpus != ""):
		return simPlan{}, true, usagef("--partition %s: partitions split a seed range, not --schedule or --corpus", o.Partition)
	case o.Schedule != "" && o.Corpus != "":
		return simPlan{}, true, usagef("--schedule and --corpus: choose one")
	case o.Schedule != "":
		s, err := readSchedule(o.Schedule)
		if err != nil {
			return simPlan{}, true, err
		}
		if hasSeed {
			s.Seed = seed
		}
		return simPlan{n: 1, schedules: slices.Values([]sim.Schedule{s})}, true, nil
	case o.Corpus != "":
		paths, err := filepath.Glob(filepath.Join(o.Corpus, "*.json"))
		if err != nil || len(paths) == 0 {
			return simPlan{}, true, usagef("--corpus %s: no *.json schedules there", o.Corpus)
		}
		slices.Sort(paths)
		// Every file is read before the first run: a bad one is bad
		// input, found before anything runs.
		var out []sim.Schedule
		for _, p := range paths {
			s, err := readSchedule(p)
			if err != nil {
				return simPlan{}, true, err
			}
			out = append(out, s)
		}
		return simPlan{n: len(out), schedules: slices.Values(out)}, true, nil
	}
	return simPlan{}, false, nil
}

// parsePartition reads "I/N": partition I (from 0) of N.
func parsePartition(p string) (i, n int, err error) {
	a, b, ok := strings.Cut(p, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || n > 100000 || i < 0 || i >= n {
		return 0, 0, usagef("--partition %q: want I/N, N from 1 to 100000 and I from 0 to N-1 (JOB_COMPLETION_INDEX/TASKSIM_SIM_PARTITIONS)", p)
	}
	return i, n, nil
}

// partitionFromEnv is the partition of a Kubernetes Indexed Job's pod:
// JOB_COMPLETION_INDEX of TASKSIM_SIM_PARTITIONS; "" when either is unset.
func partitionFromEnv(st *State) string {
	idx, parts := st.Getenv("JOB_COMPLETION_INDEX"), st.Getenv("TASKSIM_SIM_PARTITIONS")
	if idx == "" || parts == "" {
		return ""
	}
	return idx + "/" + parts
}

func readSchedule(path string) (sim.Schedule, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return sim.Schedule{}, usagef("--schedule %s: %v", path, pe.Err)
		}
		return sim.Schedule{}, err
	}
	s, err := sim.ParseSchedule(path, data)
	if err != nil {
		return sim.Schedule{}, &UsageError{Err: err}
	}
	return s, nil
}
