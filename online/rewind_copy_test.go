package online

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestFlatStateIsTheJSON: a rewind point's flat copy gives back the state
// the JSON round trip gave (the same bytes again), keeping a nil list
// apart from an empty one and a nil map apart from an empty one, and
// nothing in it changes when the state it copied is edited in place
// afterwards, nor does the state a replay gets change the copy.
func TestFlatStateIsTheJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	key, keys := randomKeys(rng, 50, 4)
	for n := range 300 {
		st := newEvictState()
		st.Member = makeFlags(rng.IntN(300))
		for i := range st.Member.len() {
			st.Member.set(i, rng.IntN(3) == 0)
		}
		for range rng.IntN(40) {
			i := rng.IntN(1000)
			st.GhostKeys[i] = keys()
			st.LiveOf[key()] = i
			st.Replaced[rng.IntN(1000)] = keys()
			st.Folded[rng.IntN(1000)] = keys()
			st.Decided[i] = rng.IntN(2) == 0
			st.InitVal[key()] = history.IntValue(int64(i))
			st.ListPrefix[key()] = []history.Value{history.IntValue(1), history.IntValue(int64(i))}
			st.Kept = append(st.Kept, [2]int{i, i + 1})
		}
		if n%2 == 0 {
			st.InitList = map[history.Key][]history.Value{key(): nil, key(): {}, key(): {"1"}}
			st.Backoff = map[int]probeBackoff{3: {At: 4, Wait: 5, Other: -1}}
			st.Tail = map[int][]history.Op{1: {{Kind: history.Append, Key: "l", Value: "2"}, {Kind: history.Read, IsList: true, Key: "l", List: []history.Value{"1"}}}}
		} else if n%3 == 0 {
			st.InitList, st.Backoff, st.Tail = map[history.Key][]history.Value{}, map[int]probeBackoff{}, map[int][]history.Op{}
		}
		st.Evicted, st.Ghosts, st.Disagreements = n, n+1, n+2
		st.Taint = nil // a point has none: a replay takes today's
		want := jsonOf(t, &st)
		f := st.flat()
		got := f.state()
		if b := jsonOf(t, &got); b != want {
			t.Fatalf("state %d: copied as\n%s\nwant\n%s", n, b, want)
		}
		// Edit the original in place: the copy must not see it.
		for i, ks := range st.GhostKeys {
			if len(ks) > 0 {
				ks[0] = "edited"
			}
			st.GhostKeys[i] = append(ks, "more")
		}
		for _, ops := range st.Tail {
			ops[0].Value = "edited"
			ops[len(ops)-1].List[0] = "edited"
		}
		st.Kept = append(st.Kept[:0], [2]int{-1, -1})
		st.Member.setAll(true)
		clear(st.LiveOf)
		again := f.state()
		if b := jsonOf(t, &again); b != want {
			t.Fatalf("state %d: the copy changed with the state it copied:\n%s\nwant\n%s", n, b, want)
		}
		// And the replay's state, edited, leaves the copy as it was.
		for i, ks := range got.GhostKeys {
			if len(ks) > 0 {
				ks[0] = "edited"
			}
			got.GhostKeys[i] = ks
		}
		for _, l := range got.ListPrefix {
			l[0] = "edited"
		}
		got.Member.setAll(true)
		for _, ops := range got.Tail {
			ops[0].Value = "edited"
		}
		if third := f.state(); jsonOf(t, &third) != want {
			t.Fatalf("state %d: a replay's edits reached the copy", n)
		}
	}
}

func jsonOf(t *testing.T, st *evictState) string {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// randomKeys returns generators of keys k0..k(n-1) and of key lists:
// of the lists, one in odds is nil and one in odds empty, the rest hold
// one to three keys (the states the copy tests fill).
func randomKeys(rng *rand.Rand, n, odds int) (key func() history.Key, keys func() []history.Key) {
	key = func() history.Key { return history.Key("k" + strconv.Itoa(rng.IntN(n))) }
	keys = func() []history.Key {
		switch rng.IntN(odds) {
		case 0:
			return nil
		case 1:
			return []history.Key{}
		}
		var ks []history.Key
		for range 1 + rng.IntN(3) {
			ks = append(ks, key())
		}
		return ks
	}
	return key, keys
}
