//go:build race

package runcmd

// raceEnabled shrinks the heavier tests under -race, which runs the
// engine an order of magnitude slower.
const raceEnabled = true
