//go:build !unix

package online

// cpuNanos is unavailable here; benchmarks report 0.
func cpuNanos() int64 { return 0 }
