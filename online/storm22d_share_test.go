package online

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestStorm22dSharedPointsAreTheirJSON: rewind points whose maps are
// changes from the point before and whose parked groups are shared
// chunks (storm22d_share.go) give back, after every later step, exactly
// the state each copied when taken (its JSON, the oracle), while the live
// state goes on being edited in place (lists written through, appended
// to, emptied, set to nil; groups re-admitted and parked again under the
// same first member with other arrays), points are dropped as takeRewind,
// rewindTo and retention drop them, and the states replays get are
// edited too (tail ops and their read lists among them). After every drop no point's chain runs through a point no
// longer kept. The sharing must happen (chunks and map entries taken
// from the point before), or the test compares nothing.
func TestStorm22dSharedPointsAreTheirJSON(t *testing.T) {
	seeds := uint64(6)
	if testing.Short() {
		seeds = 2
	}
	for seed := range seeds {
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) { sharedPointsRun(t, seed) })
	}
}

func sharedPointsRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 22))
	key, keys := randomKeys(rng, 60, 5)
	st := newEvictState()
	st.Taint = nil
	st.Member = makeFlags(0)
	o := &Online{}
	wants := map[*flatState]string{}
	nextID := 0
	sharedChunks, sharedEntries := 0, 0
	for round := range 120 {
		// The live state, edited in place as the engine does.
		n := st.Member.len() + 40
		for st.Member.len() < n {
			st.Member.push(false)
		}
		for range 30 {
			i := rng.IntN(n)
			st.Member.set(i, rng.IntN(2) == 0)
		}
		for range 12 {
			i := rng.IntN(n)
			switch rng.IntN(6) {
			case 0:
				delete(st.GhostKeys, i)
			case 1:
				if ks := st.GhostKeys[i]; len(ks) > 0 {
					ks[0] = history.Key(fmt.Sprintf("w%d", round)) // written through
				}
			case 2:
				st.GhostKeys[i] = append(st.GhostKeys[i], key())
			default:
				st.GhostKeys[i] = keys()
			}
			st.LiveOf[key()] = i
			if rng.IntN(3) == 0 {
				delete(st.LiveOf, key())
			}
			st.InitVal[key()] = history.IntValue(int64(rng.IntN(4)))
			if rng.IntN(3) == 0 {
				delete(st.InitVal, key())
			}
			st.Decided[i] = rng.IntN(2) == 0
			if rng.IntN(2) == 0 {
				delete(st.Decided, rng.IntN(n))
			}
			st.Replaced[rng.IntN(n)] = keys()
			st.Folded[rng.IntN(n)] = keys()
			k := key()
			if l := st.ListPrefix[k]; len(l) > 0 && rng.IntN(2) == 0 {
				l[len(l)-1] = history.IntValue(int64(round)) // written through
			}
			st.ListPrefix[k] = append(st.ListPrefix[k], history.IntValue(int64(i)))
			if rng.IntN(4) == 0 {
				if st.InitList == nil {
					st.InitList = map[history.Key][]history.Value{}
				}
				st.InitList[key()] = []history.Value{}
				st.InitList[key()] = nil
			}
			if rng.IntN(3) == 0 {
				if st.Tail == nil {
					st.Tail = map[int][]history.Op{}
				}
				j := rng.IntN(n)
				if ops := st.Tail[j]; len(ops) > 0 && rng.IntN(2) == 0 {
					// Written through: an op, or only a read's list.
					if l := ops[len(ops)-1].List; len(l) > 0 && rng.IntN(2) == 0 {
						l[0] = history.IntValue(int64(round))
					} else {
						ops[0].Value = history.IntValue(int64(round))
					}
				} else {
					st.Tail[j] = []history.Op{{Kind: history.Append, Key: key(), Value: history.IntValue(int64(i))}, {Kind: history.Read, IsList: true, Key: key(), List: []history.Value{history.IntValue(int64(j))}}}
				}
				if rng.IntN(3) == 0 {
					delete(st.Tail, rng.IntN(n))
				}
			}
			if rng.IntN(4) == 0 {
				if st.Backoff == nil {
					st.Backoff = map[int]probeBackoff{}
				}
				st.Backoff[i] = probeBackoff{At: round, Wait: i, Other: -1}
			}
		}
		// Parked groups: new ones near the end, old ones re-admitted,
		// and some parked again under the same first member with other
		// arrays (park makes new ones).
		for range 1 + rng.IntN(3) {
			if st.Parked == nil {
				st.Parked = map[int]parkedGroup{}
			}
			nextID += 1 + rng.IntN(300)
			st.Parked[nextID] = parkedGroup{Members: []int{nextID, nextID + 1}, Keys: []history.Key{key()}}
		}
		if len(st.Parked) > 3 {
			for id := range st.Parked {
				switch rng.IntN(10) {
				case 0:
					delete(st.Parked, id)
				case 1:
					st.Parked[id] = parkedGroup{Members: []int{id, id + 2}, Keys: []history.Key{key(), key()}, Sessions: []string{"s"}, Kept: [][2]int{{id, id + 2}}}
				}
				break
			}
		}
		st.Kept = append(st.Kept, [2]int{round, round + 1})
		st.Evicted, st.Ghosts = round, round+1

		// Take a point, as takeRewind does, against the newest.
		var prev *flatState
		if k := len(o.rewinds); k > 0 {
			prev = o.rewinds[k-1].st
		}
		f := st.flatOn(prev)
		wants[f] = jsonOf(t, &st)
		if prev != nil {
			for _, ch := range f.parked {
				for _, pc := range prev.parked {
					if ch == pc {
						sharedChunks++
					}
				}
			}
			sharedEntries += len(st.GhostKeys) - len(f.ghostKeys.k)
		}
		o.rewinds = append(o.rewinds, rewindPoint{Pos: round, st: f})

		// Drop points as the engine does: the oldest beyond four, now
		// and then one in the middle (a heal point kept) or the newest
		// (rewindTo), and rebase.
		switch {
		case len(o.rewinds) > maxRewinds+1 && rng.IntN(3) == 0:
			o.rewinds = append(o.rewinds[:1], o.rewinds[2:]...)
		case len(o.rewinds) > maxRewinds:
			o.rewinds = o.rewinds[1:]
		case len(o.rewinds) > 1 && rng.IntN(8) == 0:
			o.rewinds = o.rewinds[:len(o.rewinds)-1]
		}
		o.rebaseRewinds()

		// Every point kept is what it copied; none leans on a dropped
		// point; a replay's edits do not reach it.
		var before *flatState
		for k, p := range o.rewinds {
			got := p.st.state()
			if b := jsonOf(t, &got); b != wants[p.st] {
				t.Fatalf("round %d, point %d of %d (taken at round %d): gives back\n%s\nwant\n%s", round, k, len(o.rewinds), p.Pos, b, wants[p.st])
			}
			if p.st.base != nil && p.st.base != before {
				t.Fatalf("round %d, point %d: its chain runs through a point no longer kept", round, k)
			}
			before = p.st
			for _, ks := range got.GhostKeys {
				if len(ks) > 0 {
					ks[0] = "replayed"
				}
			}
			for _, l := range got.ListPrefix {
				if len(l) > 0 {
					l[0] = "replayed"
				}
			}
			for _, ops := range got.Tail {
				if len(ops) > 0 {
					ops[0].Value = "replayed"
				}
			}
		}
	}
	if sharedChunks == 0 || sharedEntries <= 0 {
		t.Fatalf("chunks shared %d, ghost entries not copied again %d: nothing was shared", sharedChunks, sharedEntries)
	}
}
