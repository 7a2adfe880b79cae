//go:build unix

package online

import "syscall"

// cpuNanos is the process's user+system CPU time, GC included: on a shared
// machine wall time per operation also counts waiting for a core.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
