//go:build !race

package runcmd

const raceEnabled = false
