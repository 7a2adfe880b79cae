package weakonline

import (
	"math/rand/v2"
	"testing"
)

// TestLastOfSessionByBruteForce compares lastOfSession's marks on random
// tails with the definition: an entry is marked when no later entry of
// the tail has its session; tails that do not fit report so.
func TestLastOfSessionByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 1))
	for round := range 20000 {
		n := rng.IntN(70)
		ns := 1 + rng.IntN(80)
		tail := make([]logEntry, n)
		for x := range tail {
			tail[x] = logEntry{s: int32(rng.IntN(ns)), pos: int32(x), t: int32(x)}
		}
		last, ok := lastOfSession(tail)
		fits := n <= 64
		for _, en := range tail {
			if en.s >= 64 {
				fits = false
			}
		}
		if ok != fits {
			t.Fatalf("round %d: ok = %v for %d entries of %d sessions", round, ok, n, ns)
		}
		if !ok {
			continue
		}
		for x, en := range tail {
			want := true
			for _, later := range tail[x+1:] {
				if later.s == en.s {
					want = false
				}
			}
			if got := last&(1<<x) != 0; got != want {
				t.Fatalf("round %d: entry %d (session %d) marked %v, want %v", round, x, en.s, got, want)
			}
		}
	}
}

// TestTailAsLastT: forcedCausal reading a session's last write off its
// key's log tail raises the alerts, and makes the steps check, that
// reading it off keyWriters.lastT does (generated causal streams with
// injected anomalies, every log trimmed as soon as it may).
func TestTailAsLastT(t *testing.T) {
	causalAsNaive(t, 3434, &naiveTail, "tail vs lastT", "reading lastT")
}
