package load

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/PID/stat times: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// ProcessCPU returns the CPU time (user + system) process pid has used,
// from /proc/PID/stat (Linux; 10 ms resolution). pid 0 means this process.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(procFile(pid, "stat"))
	if err != nil {
		return 0, fmt.Errorf("process CPU time: %w", err)
	}
	return parseStat(string(b))
}

// procFile is the path of /proc/PID/file; pid 0 means this process.
func procFile(pid int, file string) string {
	if pid == 0 {
		return "/proc/self/" + file
	}
	return "/proc/" + strconv.Itoa(pid) + "/" + file
}

// parseStat reads utime and stime, fields 14 and 15 of a stat line. The
// command name (field 2) is in parentheses and may hold spaces, so fields
// are counted from the last ')'.
func parseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("process CPU time: malformed stat line")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("process CPU time: stat line has %d fields after the name", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("process CPU time: malformed utime/stime %q %q", f[11], f[12])
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// PeakRSS returns the most resident memory process pid has used (VmHWM
// in /proc/PID/status, Linux); pid 0 means this process.
func PeakRSS(pid int) (int64, error) {
	name := procFile(pid, "status")
	b, err := os.ReadFile(name)
	if err != nil {
		return 0, fmt.Errorf("peak memory: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak memory: malformed VmHWM %q", v)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("peak memory: no VmHWM in %s", name)
}
