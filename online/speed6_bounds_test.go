package online

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestSessionBoundsSound checks sessionBounds against the definition on
// random sessions: whenever allBefore(u, t) holds, every member ranked up
// to u precedes t in real time and has a constant commit literal (so
// remove may skip them without asking), and whenever allAfter(t, u)
// holds, t precedes every member ranked from u on. The histories have
// zero-length transactions, equal timestamps, unknown outcomes (finite
// and infinite in-doubt horizons), members without timestamps, and skew,
// where a bound that assumed monotone times would skip a neighbour. It
// also checks that the bounds do stop a scan on ordinary sessions.
func TestSessionBoundsSound(t *testing.T) {
	rng := rand.New(rand.NewSource(6))
	stopped := 0
	for iter := 0; iter < 3000; iter++ {
		h := &history.History{}
		n := 2 + rng.Intn(14)
		clock := int64(0)
		for i := 0; i < n; i++ {
			tx := history.Txn{ID: fmt.Sprintf("t%d", i), Session: fmt.Sprintf("s%d", rng.Intn(2)), HasSession: true, HasTime: rng.Intn(20) != 0, Status: history.Committed}
			clock += int64(rng.Intn(4))
			tx.Start = clock
			tx.End = tx.Start + int64(rng.Intn(3))
			if rng.Intn(8) == 0 {
				tx.End = tx.Start + int64(rng.Intn(30)) // a long one
			}
			switch rng.Intn(10) {
			case 0:
				tx.Status = history.Unknown
			case 1:
				tx.Status = history.Aborted
			}
			tx.Ops = []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("k%d", rng.Intn(3))), Value: history.Value(fmt.Sprint(i))}}
			h.Txns = append(h.Txns, tx)
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.Skew = int64(rng.Intn(3))
		opts.InDoubt = []int64{-1, 0, 5}[rng.Intn(3)]
		p := incremental.Prepare(h, opts)
		e := incremental.NewEncoder(p, incremental.WindowEncodeConfig(nil, nil))
		r := &reduced{h: h, p: p, e: e}
		sb := newSessionBounds(r)
		for _, ms := range p.SessionMembers() {
			for ti, tt := range ms {
				for k := 0; k < ti; k++ {
					if !sb.allBefore(p, ms[k], tt) {
						continue
					}
					if k == ti-1 {
						stopped++
					}
					for _, u := range ms[:k+1] {
						if !p.RealTimeBefore(u, tt) {
							t.Fatalf("iter %d: allBefore(%s, %s) but %s does not precede %s\n%v", iter, h.Txns[ms[k]].ID, h.Txns[tt].ID, h.Txns[u].ID, h.Txns[tt].ID, h.Txns)
						}
						if a := e.Act()[u]; a != incremental.LitTrue && a != incremental.LitFalse {
							t.Fatalf("iter %d: allBefore skips %s, whose commit is a choice", iter, h.Txns[u].ID)
						}
					}
				}
				for k := ti + 1; k < len(ms); k++ {
					if !sb.allAfter(p, tt, ms[k]) {
						continue
					}
					for _, u := range ms[k:] {
						if !p.RealTimeBefore(tt, u) {
							t.Fatalf("iter %d: allAfter(%s, %s) but %s does not follow %s\n%v", iter, h.Txns[tt].ID, h.Txns[ms[k]].ID, h.Txns[u].ID, h.Txns[tt].ID, h.Txns)
						}
					}
				}
			}
		}
	}
	if stopped == 0 {
		t.Fatal("the bounds never stopped a scan: the test does not exercise them")
	}
}
