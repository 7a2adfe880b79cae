//go:build !unix

package window

func cpuNanos() int64 { return 0 }
