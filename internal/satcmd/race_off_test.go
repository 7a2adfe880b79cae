//go:build !race

package satcmd

const raceEnabled = false
