//go:build race

package satcmd

// raceEnabled shrinks the minisat comparison: the race detector slows our
// solver several times, and the comparison is about answers, not speed.
const raceEnabled = true
