package saturation

import (
	"errors"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// randomResolved is a resolved history of n transactions in k sessions
// over keys keys: each transaction writes some keys and reads others,
// each from an earlier writer of the key (by index) or the initial state,
// so so ∪ wr is acyclic and Causal's saturation runs; read atomic and
// causal violations come from the random choice of old sources. With
// long, one session holds at least long transactions (clock widths) and
// every read is of the latest writer (a serial, valid history).
func randomResolved(rng *rand.Rand, n, k, keys, long int) *History {
	h := &History{Session: make([]int32, n), Pos: make([]int32, n), Reads: make([][]Read, n), Writes: make([][]int32, n), Keys: keys}
	h.Sessions = make([][]int32, k)
	writers := make([][]int32, keys)
	for t := range n {
		s := rng.Intn(k)
		if t < long {
			s = 0
		}
		h.Session[t], h.Pos[t] = int32(s), int32(len(h.Sessions[s]))
		h.Sessions[s] = append(h.Sessions[s], int32(t))
		for x := range keys {
			switch rng.Intn(4) {
			case 0:
				from := Initial
				if ws := writers[x]; len(ws) > 0 && long > 0 {
					// The latest writer: serial, so valid, so that the
					// long session's clocks are compared in full.
					from = ws[len(ws)-1]
				} else if len(ws) > 0 && rng.Intn(5) > 0 {
					from = ws[rng.Intn(len(ws))]
				}
				h.Reads[t] = append(h.Reads[t], Read{Key: int32(x), From: from})
			case 1:
				h.Writes[t] = append(h.Writes[t], int32(x))
			}
		}
		for _, x := range h.Writes[t] {
			writers[x] = append(writers[x], int32(t))
		}
	}
	// Sessions no transaction joined are dropped (Check's histories list
	// only sessions with transactions).
	var sess [][]int32
	for _, s := range h.Sessions {
		if len(s) > 0 {
			for _, t := range s {
				h.Session[t] = int32(len(sess))
			}
			sess = append(sess, s)
		}
	}
	h.Sessions = sess
	return h
}

// pastClocks is the naive model of the clocks: each transaction's causal
// past found by a search along so and wr backwards, and per session the
// highest position in it, plus one.
func pastClocks(h *History) [][]int32 {
	n, k := h.N(), len(h.Sessions)
	out := make([][]int32, n)
	for t := range n {
		row := make([]int32, k)
		seen := map[int32]bool{int32(t): true}
		stack := []int32{int32(t)}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			row[h.Session[v]] = max(row[h.Session[v]], h.Pos[v]+1)
			var preds []int32
			if h.Pos[v] > 0 {
				preds = append(preds, h.Sessions[h.Session[v]][h.Pos[v]-1])
			}
			for _, r := range h.Reads[v] {
				if r.From != Initial {
					preds = append(preds, r.From)
				}
			}
			for _, p := range preds {
				if !seen[p] {
					seen[p] = true
					stack = append(stack, p)
				}
			}
		}
		out[t] = row
	}
	return out
}

func clocksAs[C clock](h *History, order []int32) [][]int32 {
	k := len(h.Sessions)
	vc := clocks[C](h, order)
	out := make([][]int32, h.N())
	for t := range out {
		out[t] = make([]int32, k)
		for s := range k {
			out[t][s] = int32(vc[t*k+s])
		}
	}
	return out
}

// TestClocksAgainstPasts: the clocks, at every entry width and with the
// join skipped for a source already in the past (docs/SEMANTICS.md §3
// "Causal's clocks as narrow as the sessions are short"), are the
// prefixes of each transaction's causal past found by search.
func TestClocksAgainstPasts(t *testing.T) {
	rng := rand.New(rand.NewSource(26))
	for i := range 3000 {
		// Up to 20 sessions: joins of one- and two-byte entries go
		// eight and four at a time, the rest one at a time.
		n, k := 1+rng.Intn(30), 1+rng.Intn(20)
		long := 0
		if i%50 == 0 {
			long = 260 // a session past uint8's reach
			n = long + rng.Intn(40)
		}
		h := randomResolved(rng, n, k, 1+rng.Intn(5), long)
		g := &graph{n: n}
		baseEdges(h, Causal, g)
		order, _, ok := g.topo()
		if !ok {
			t.Fatalf("history %d: so ∪ wr has a cycle", i)
		}
		want := pastClocks(h)
		got := map[string][][]int32{"int32": clocksAs[int32](h, order), "uint16": clocksAs[uint16](h, order)}
		if long == 0 {
			got["uint8"] = clocksAs[uint8](h, order)
		}
		for name, c := range got {
			if !reflect.DeepEqual(c, want) {
				t.Fatalf("history %d (%d txns, %d sessions): %s clocks %v, the pasts say %v", i, n, len(h.Sessions), name, c, want)
			}
		}
	}
}

// TestNarrowClocksAgreeWithInt32: Check with the entry width clockWidth
// picks gives what the int32 clocks (the previous code) give: verdict,
// order, cycle and forced edges.
func TestNarrowClocksAgreeWithInt32(t *testing.T) {
	rng := rand.New(rand.NewSource(27))
	valid, invalid := 0, 0
	for i := range 3000 {
		n, k := 1+rng.Intn(40), 1+rng.Intn(6)
		long := 0
		if i%50 == 0 {
			long = 255 + rng.Intn(3) // around uint8's last length
			n = long + rng.Intn(30)
		}
		h := randomResolved(rng, n, k, 1+rng.Intn(5), long)
		want, err := check(h, Causal, 4)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Check(h, Causal)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("history %d (width %d): %+v, int32 clocks %+v", i, clockWidth(h), got, want)
		}
		if want.Valid {
			// The clocks at the width Check picks are the pasts (the
			// order is a topological order of so ∪ wr ∪ forced, so of
			// so ∪ wr).
			var c [][]int32
			switch clockWidth(h) {
			case 1:
				c = clocksAs[uint8](h, want.Order)
			case 2:
				c = clocksAs[uint16](h, want.Order)
			default:
				c = clocksAs[int32](h, want.Order)
			}
			if p := pastClocks(h); !reflect.DeepEqual(c, p) {
				t.Fatalf("history %d (width %d): clocks %v, the pasts say %v", i, clockWidth(h), c, p)
			}
		}
		if want.Valid {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 300 || invalid < 300 {
		t.Fatalf("%d valid and %d invalid histories: the sample tests too little of one side", valid, invalid)
	}
}

// TestClockWidth: an entry holds 0 to a session's length, so a session
// of 255 transactions fits a byte and one of 256 does not.
func TestClockWidth(t *testing.T) {
	for _, c := range []struct{ longest, want int }{{1, 1}, {255, 1}, {256, 2}, {65535, 2}, {65536, 4}} {
		h := &History{Sessions: [][]int32{make([]int32, 3), make([]int32, c.longest)}}
		if got := clockWidth(h); got != c.want {
			t.Errorf("longest session %d: width %d, want %d", c.longest, got, c.want)
		}
	}
}

// TestManySessionsDecide: 1,000 sessions of 70 transactions, the shape of
// AWDIT's generator (about 200 a session there), are n·k = 70M clock
// entries, above the 1<<26 int32 entries the clocks were bounded by: the
// int32 clocks refuse them (the check then answered unknown after the SAT
// engine), the one-byte clocks decide them in 70 MB.
func TestManySessionsDecide(t *testing.T) {
	if testing.Short() {
		t.Skip("70 MB of clocks")
	}
	const k, per, keys = 1000, 70, 10000
	rng := rand.New(rand.NewSource(28))
	n := k * per
	h := &History{Session: make([]int32, n), Pos: make([]int32, n), Reads: make([][]Read, n), Writes: make([][]int32, n), Keys: keys}
	h.Sessions = make([][]int32, k)
	last := make([]int32, keys)
	for x := range last {
		last[x] = Initial
	}
	// Round robin over the sessions, each transaction reading two keys
	// from their latest writers and writing a third: serial, so valid.
	for t := range int32(n) {
		s := int(t) % k
		h.Session[t], h.Pos[t] = int32(s), int32(len(h.Sessions[s]))
		h.Sessions[s] = append(h.Sessions[s], t)
		for range 2 {
			x := rng.Intn(keys)
			h.Reads[t] = append(h.Reads[t], Read{Key: int32(x), From: last[x]})
		}
		x := rng.Intn(keys)
		h.Writes[t] = []int32{int32(x)}
		last[x] = t
	}
	if _, err := check(h, Causal, 4); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("int32 clocks: %v, want ErrTooManySessions", err)
	}
	res, err := Check(h, Causal)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid {
		t.Fatalf("a serial history fails causal: %+v", res.Cycle)
	}
}

// TestJoinAgainstMax: join (eight one-byte or four two-byte entries at a
// time, then one at a time) is the entrywise maximum, on lengths around
// the word size and values at the lanes' edges (top bit set or not, all
// ones, zero).
func TestJoinAgainstMax(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	edges8 := []uint8{0, 1, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff}
	edges16 := []uint16{0, 1, 0xff, 0x100, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff}
	for range 20000 {
		n := rng.Intn(40)
		r8, c8 := make([]uint8, n), make([]uint8, n)
		r16, c16 := make([]uint16, n), make([]uint16, n)
		r32, c32 := make([]int32, n), make([]int32, n)
		for i := range n {
			if rng.Intn(2) == 0 {
				r8[i], c8[i] = edges8[rng.Intn(len(edges8))], edges8[rng.Intn(len(edges8))]
				r16[i], c16[i] = edges16[rng.Intn(len(edges16))], edges16[rng.Intn(len(edges16))]
			} else {
				r8[i], c8[i] = uint8(rng.Intn(256)), uint8(rng.Intn(256))
				r16[i], c16[i] = uint16(rng.Intn(65536)), uint16(rng.Intn(65536))
			}
			r32[i], c32[i] = rng.Int31(), rng.Int31()
		}
		w8, w16, w32 := make([]uint8, n), make([]uint16, n), make([]int32, n)
		for i := range n {
			w8[i], w16[i], w32[i] = max(r8[i], c8[i]), max(r16[i], c16[i]), max(r32[i], c32[i])
		}
		c8x, c16x := slices.Clone(c8), slices.Clone(c16)
		join(r8, c8)
		join(r16, c16)
		join(r32, c32)
		if !slices.Equal(r8, w8) || !slices.Equal(r16, w16) || !slices.Equal(r32, w32) {
			t.Fatalf("join: %v %v %v, want %v %v %v", r8, r16, r32, w8, w16, w32)
		}
		if !slices.Equal(c8, c8x) || !slices.Equal(c16, c16x) {
			t.Fatal("join changed its argument")
		}
	}
}
