//go:build unix

package closure

import "syscall"

// cpuNanos is the process's user+system CPU time, GC workers included: on a
// shared machine it says what an operation costs when wall time does not.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
