//go:build !unix

package closure

func cpuNanos() int64 { return 0 }
