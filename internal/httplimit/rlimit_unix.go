//go:build unix

package httplimit

import "syscall"

// openFileLimit returns the process's soft limit on open files (Go raises
// it to the hard limit at start), or 0 if unknown.
func openFileLimit() int {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
