package gen

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

func preset(t testing.TB, name string) Config {
	t.Helper()
	c, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// configs is a spread of knob settings for the property tests.
func configs(t testing.TB) map[string]Config {
	m := map[string]Config{}
	for _, n := range PresetNames() {
		c := preset(t, n)
		c.Txns = 3000
		m[n] = c
	}
	heavy := preset(t, "mixed")
	heavy.Txns, heavy.Keys, heavy.Sessions, heavy.Concurrency = 3000, 20, 8, 10
	heavy.UnknownRatio, heavy.AbortRatio, heavy.DupValueRatio, heavy.ListRatio = 0.2, 0.2, 0.4, 0.5
	heavy.MaxListLen = 5
	m["contended"] = heavy
	z := preset(t, "mixed")
	z.Txns, z.KeyDist, z.Seed = 3000, Zipf, 7
	m["zipf"] = z
	one := preset(t, "mixed")
	one.Txns, one.Sessions, one.Concurrency, one.Keys = 500, 1, 0, 10
	m["one-session"] = one
	return m
}

func TestReplayInExecutionOrder(t *testing.T) {
	for name, cfg := range configs(t) {
		t.Run(name, func(t *testing.T) {
			recs, _ := collect(t, cfg)
			if len(recs) != cfg.Txns {
				t.Fatalf("got %d txns, want %d", len(recs), cfg.Txns)
			}
			if err := replayExecOrder(recs); err != nil {
				t.Fatal(err)
			}
			h := history.History{}
			for _, r := range recs {
				h.Txns = append(h.Txns, r.t)
			}
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The replay oracle must catch a single corrupted read.
func TestReplayCatchesCorruption(t *testing.T) {
	cfg := preset(t, "mixed")
	cfg.Txns = 500
	recs, _ := collect(t, cfg)
	corrupted := 0
	for i := range recs {
		for j, op := range recs[i].t.Ops {
			if op.Kind == history.Read && !op.IsList && corrupted < 20 && i%7 == 0 {
				orig := op.Value
				recs[i].t.Ops[j].Value = history.IntValue(999999)
				if replayExecOrder(recs) == nil {
					t.Fatalf("%s: corrupted read not caught", recs[i].t.ID)
				}
				recs[i].t.Ops[j].Value = orig
				corrupted++
				break
			}
		}
	}
	if corrupted == 0 {
		t.Fatal("nothing corrupted")
	}
}

// Tiny generated histories are strict serializable by the brute-force
// oracle too, which knows nothing of the execution order.
func TestTinyHistoriesBruteForce(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		cfg := Config{
			Txns: 7, Sessions: 3, Keys: 3, OpsPerTxn: 3, Concurrency: 3,
			ReadRatio: 0.5, BlindWriteRatio: 0.5, DupValueRatio: 0.3,
			UnknownRatio: 0.2, AbortRatio: 0.1, ListRatio: 0.34, Seed: seed,
		}
		h, _, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !bruteValid(project(h.Txns, h.Txns, true), true) {
			for _, tx := range h.Txns {
				t.Log(tx.Compact())
			}
			t.Fatalf("seed %d: not strict serializable", seed)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for name, cfg := range configs(t) {
		cfg.Inject = []string{history.LostUpdate, history.G1c}
		a, ia, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, ib, _ := Generate(cfg)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ia, ib) {
			t.Errorf("%s: same seed, different histories", name)
		}
		cfg.Seed++
		c, _, _ := Generate(cfg)
		if reflect.DeepEqual(a, c) {
			t.Errorf("%s: seeds %d and %d gave one history", name, cfg.Seed-1, cfg.Seed)
		}
	}
}

func TestEndOrderAndRealisticTimes(t *testing.T) {
	cfg := preset(t, "mixed")
	cfg.Inject = InjectTypes()
	h, _, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Txns {
		tx := &h.Txns[i]
		if i > 0 && tx.End < h.Txns[i-1].End {
			t.Fatalf("%s ends at %d before %s at %d", tx.ID, tx.End, h.Txns[i-1].ID, h.Txns[i-1].End)
		}
		if tx.Start < 1_600_000_000_000_000_000 || tx.End <= tx.Start || !tx.HasTime || !tx.HasSession {
			t.Fatalf("%s: unrealistic %+v", tx.ID, tx)
		}
	}
}

// meanOverlap is the mean, over transactions, of the number of other
// transactions whose client interval intersects theirs.
func meanOverlap(txns []history.Txn) float64 {
	n := len(txns)
	starts := make([]int64, n)
	ends := make([]int64, n)
	for i, t := range txns {
		starts[i], ends[i] = t.Start, t.End
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	total := 0
	for _, t := range txns {
		// j overlaps t iff s_j < e_t and e_j > s_t.
		begunBefore := sort.Search(n, func(i int) bool { return starts[i] >= t.End })
		endedBefore := sort.Search(n, func(i int) bool { return ends[i] > t.Start })
		total += begunBefore - endedBefore - 1
	}
	return float64(total) / float64(n)
}

func TestConcurrency(t *testing.T) {
	for _, tc := range []struct {
		sessions    int
		concurrency float64
	}{{32, 16}, {32, 4}, {8, 14}, {64, 40}, {2, 1}, {4, 6}} {
		t.Run(fmt.Sprintf("sessions=%d/concurrency=%v", tc.sessions, tc.concurrency), func(t *testing.T) {
			cfg := preset(t, "blindw-rw")
			cfg.Txns, cfg.Sessions, cfg.Concurrency = 20000, tc.sessions, tc.concurrency
			h, _, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := meanOverlap(h.Txns)
			if math.Abs(got-tc.concurrency) > 0.04*tc.concurrency {
				t.Errorf("mean overlap %.2f, want %v ± 4%%", got, tc.concurrency)
			}
			t.Logf("mean overlap %.2f", got)
		})
	}
	cfg := preset(t, "mixed")
	if h, _, _ := Generate(cfg); meanOverlap(h.Txns) < 15 {
		t.Errorf("default concurrency %.2f < 15", meanOverlap(h.Txns))
	}
}

// counts measures every ratio the Config promises.
type counts struct {
	txns, ops, logical, reads, writes, blind, dups, appends, listOps int
	aborted, unknown, readOnly                                       int
}

func measure(txns []history.Txn) counts {
	var c counts
	for i := range txns {
		t := &txns[i]
		c.txns++
		c.ops += len(t.Ops)
		switch t.Status {
		case history.Aborted:
			c.aborted++
		case history.Unknown:
			c.unknown++
		}
		if !t.Writes() {
			c.readOnly++
		}
		seen := map[history.Key]map[history.Value]bool{}
		for j, op := range t.Ops {
			rmwRead := op.Kind == history.Read && j+1 < len(t.Ops) && t.Ops[j+1].Kind == history.Write && t.Ops[j+1].Key == op.Key
			if !rmwRead {
				c.logical++
			}
			if strings.HasPrefix(string(op.Key), `"l`) {
				c.listOps++
			}
			switch op.Kind {
			case history.Read:
				if !rmwRead {
					c.reads++
				}
			case history.Append:
				c.appends++
			case history.Write:
				c.writes++
				if j == 0 || t.Ops[j-1].Kind != history.Read || t.Ops[j-1].Key != op.Key {
					c.blind++
				}
				if seen[op.Key] == nil {
					seen[op.Key] = map[history.Value]bool{}
				}
				seen[op.Key][op.Value] = true
			}
		}
	}
	return c
}

func TestRatios(t *testing.T) {
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.4f, want %.4f ± %.4f", name, got, want, tol)
		}
	}
	for _, tc := range []struct{ read, blind, dup, unknown, abort, list float64 }{
		{0.5, 0.5, 0.05, 0.01, 0.02, 0.2},
		{0.9, 0, 0, 0, 0, 0},
		{0.1, 1, 0.5, 0.3, 0.3, 0.5},
	} {
		cfg := preset(t, "mixed")
		cfg.Txns = 20000
		cfg.ReadRatio, cfg.BlindWriteRatio, cfg.DupValueRatio = tc.read, tc.blind, tc.dup
		cfg.UnknownRatio, cfg.AbortRatio, cfg.ListRatio = tc.unknown, tc.abort, tc.list
		h, _, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := measure(h.Txns)
		near("ops per txn (logical)", float64(c.logical)/float64(c.txns), 8, 0.01)
		near("read ratio", float64(c.reads)/float64(c.logical), tc.read, 0.01)
		if c.writes > 0 {
			// A standalone read followed by a blind write of the same
			// key looks like a read-modify-write: allow for it.
			near("blind write ratio", float64(c.blind)/float64(c.writes), tc.blind, 0.02)
		}
		near("unknown ratio", float64(c.unknown)/float64(c.txns), tc.unknown, 0.01)
		near("abort ratio", float64(c.aborted)/float64(c.txns), tc.abort, 0.01)
		near("list op ratio", float64(c.listOps)/float64(c.logical), tc.list, 0.02)
		near("dup ratio", dupRatio(h.Txns), tc.dup, 0.02)
	}
	for name, ro := range map[string]float64{"blindw-rh": 0.8, "blindw-rw": 0.5, "blindw-wh": 0.2} {
		cfg := preset(t, name)
		cfg.Txns = 20000
		h, _, err := Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := measure(h.Txns)
		near(name+" read-only txns", float64(c.readOnly)/float64(c.txns), ro, 0.015)
		near(name+" ops per txn", float64(c.ops)/float64(c.txns), 8, 1e-9)
		if c.blind != c.writes || c.appends != 0 || c.aborted+c.unknown != 0 {
			t.Errorf("%s: %+v: want blind writes only, no lists, all committed", name, c)
		}
		for _, tx := range h.Txns {
			r, w := 0, 0
			for _, op := range tx.Ops {
				if op.Kind == history.Read {
					r++
				} else {
					w++
				}
			}
			if r > 0 && w > 0 {
				t.Fatalf("%s: %s mixes reads and writes", name, tx.ID)
			}
		}
	}
}

// dupRatio: the fraction of register writes whose value another,
// earlier-executed transaction wrote to the key. Values are per-key
// counters, so "earlier" is "some other transaction wrote it before":
// approximated by counting values written more than once, per writer.
func dupRatio(txns []history.Txn) float64 {
	type kv struct {
		k history.Key
		v history.Value
	}
	first := map[kv]string{}
	writes, dups := 0, 0
	// Fresh values grow per key: the first writer of a value is the one
	// with the smallest counter history; a value seen with another
	// transaction's id earlier in start order is a duplicate.
	byStart := append([]history.Txn(nil), txns...)
	sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].Start < byStart[j].Start })
	for _, t := range byStart {
		for _, op := range t.Ops {
			if op.Kind != history.Write {
				continue
			}
			writes++
			id, ok := first[kv{op.Key, op.Value}]
			if ok && id != t.ID {
				dups++
			} else if !ok {
				first[kv{op.Key, op.Value}] = t.ID
			}
		}
	}
	// A key's first write has nothing to duplicate.
	keys := map[history.Key]bool{}
	for p := range first {
		keys[p.k] = true
	}
	if writes <= len(keys) {
		return 0
	}
	return float64(dups) / float64(writes-len(keys))
}

func TestListsRotateAndStayShort(t *testing.T) {
	cfg := preset(t, "mixed")
	cfg.Keys, cfg.ListRatio, cfg.MaxListLen = 10, 1, 4
	h, _, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[history.Key]bool{}
	for _, tx := range h.Txns {
		for _, op := range tx.Ops {
			if op.IsList && len(op.List) > 4+cfg.OpsPerTxn {
				t.Fatalf("%s: list of %d", tx.ID, len(op.List))
			}
			keys[op.Key] = true
		}
	}
	if len(keys) < 100 {
		t.Errorf("only %d list keys: lists do not rotate", len(keys))
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.ReadRatio = 1.5 }, "read ratio"},
		{func(c *Config) { c.UnknownRatio, c.AbortRatio = 0.6, 0.6 }, "unknown ratio + abort ratio"},
		{func(c *Config) { c.Sessions, c.Concurrency = 4, 7 }, "add sessions"},
		{func(c *Config) { c.Inject = []string{"G9"} }, `unknown anomaly type "G9"`},
		{func(c *Config) { c.KeyDist, c.ZipfS = Zipf, 0.5 }, "zipf exponent"},
		{func(c *Config) { c.Txns = -1 }, "txns"},
	} {
		cfg := preset(t, "mixed")
		tc.mod(&cfg)
		_, _, err := Generate(cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to mention %q", err, tc.want)
		}
	}
	if _, err := Preset("nope"); err == nil {
		t.Error("unknown preset accepted")
	}
	if _, err := ParseKeyDist("zipf"); err != nil {
		t.Error(err)
	}
}

func TestStreamStopsAtEmitError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := GenerateStream(preset(t, "mixed"), func(history.Txn) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("err %v after %d txns", err, n)
	}
}

// TestLongStream streams STREAMCHECK_GEN_TXNS transactions (e.g. 10000000)
// and checks that memory stays bounded; skipped unless set.
func TestLongStream(t *testing.T) {
	s := os.Getenv("STREAMCHECK_GEN_TXNS")
	if s == "" {
		t.Skip("set STREAMCHECK_GEN_TXNS=10000000 to stream a long history")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg := preset(t, "mixed")
	cfg.Txns = n
	var last int64
	got := 0
	if _, err := GenerateStream(cfg, func(tx history.Txn) error {
		if tx.End < last {
			return fmt.Errorf("%s out of end order", tx.ID)
		}
		last = tx.End
		got++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("got %d", got)
	}
}
