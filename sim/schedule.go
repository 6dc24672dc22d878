package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// ScheduleFormat is the format tag of a schedule file.
const ScheduleFormat = "tasksim-sim-schedule/1"

// Schedule is everything a run depends on: the seed (ids, fault draws),
// the workload and the fault specs. The same schedule gives the same run.
type Schedule struct {
	Seed     uint64   `json:"seed"`
	Workload Workload `json:"workload"`
	Faults   []string `json:"faults"`
	// Fails names the rule a kept failure fails, for a regression corpus.
	Fails string `json:"fails,omitempty"`
}

// Draw makes the schedule of a seed: its workload and, unless fo gives
// the specs or none, its faults.
func Draw(seed uint64, wo *WorkloadOptions, fo *FaultOptions) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x5157_5eed))
	s := Schedule{Seed: seed, Workload: DrawWorkload(r, wo), Faults: []string{}}
	var f FaultOptions
	if fo != nil {
		f = *fo
	}
	switch {
	case f.None:
	case len(f.Specs) > 0:
		s.Faults = append(s.Faults, f.Specs...)
	default:
		rate := f.Rate
		if rate <= 0 {
			rate = DefaultFaultRate
		}
		s.Faults = drawFaults(r, registry(f.Registry), rate, s.Workload.Transport, revisionOf(s.Workload))
	}
	return s
}

type scheduleFile struct {
	Format string `json:"format"`
	Schedule
}

// MarshalSchedule returns s as a schedule file.
func MarshalSchedule(s Schedule) ([]byte, error) {
	b, err := json.MarshalIndent(scheduleFile{Format: ScheduleFormat, Schedule: s}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseSchedule reads a schedule file; name is used in errors, which are
// one line.
func ParseSchedule(name string, data []byte) (Schedule, error) {
	var f scheduleFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Schedule{}, fmt.Errorf("%s: not a tasksim sim schedule: %v", name, err)
	}
	if f.Format != ScheduleFormat {
		return Schedule{}, fmt.Errorf("%s: not a tasksim sim schedule (format %q, want %q)", name, f.Format, ScheduleFormat)
	}
	if err := f.Workload.Validate(); err != nil {
		return Schedule{}, fmt.Errorf("%s: %v", name, err)
	}
	if err := (&FaultOptions{Specs: f.Faults, Revision: f.Workload.Revision}).Check(f.Workload.Transport); err != nil {
		return Schedule{}, fmt.Errorf("%s: %v", name, err)
	}
	if f.Faults == nil {
		f.Faults = []string{}
	}
	return f.Schedule, nil
}
