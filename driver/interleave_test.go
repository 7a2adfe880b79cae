package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// TestInterleavingsStepAlike is D1/D3 as a property: the same events per
// partition, merged in different interleavings (and with some events
// late, so dead-lettered writers are queued), give the same steps: the
// same ticks, the same sets given to the engine in the same order, and
// the same alert ids.
func TestInterleavingsStepAlike(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		parts := [][]history.Txn{nil, nil, nil}
		val := 0
		written := map[string][]int{}
		for i := range 120 {
			start := int64(rng.IntN(3000))
			x := history.Txn{ID: fmt.Sprintf("t%d", i), Start: start, End: start + 1 + int64(rng.IntN(60)),
				HasTime: true, Status: history.Committed}
			for range 1 + rng.IntN(3) {
				k := fmt.Sprintf("k%d", rng.IntN(6))
				if rng.IntN(2) == 0 {
					val++
					written[k] = append(written[k], val)
					x.Ops = append(x.Ops, history.Op{Kind: history.Write, Key: history.Key(k), Value: history.IntValue(int64(val))})
				} else if vs := written[k]; len(vs) > 0 {
					x.Ops = append(x.Ops, history.Op{Kind: history.Read, Key: history.Key(k), Value: history.IntValue(int64(vs[rng.IntN(len(vs))]))})
				}
			}
			p := rng.IntN(len(parts))
			parts[p] = append(parts[p], x)
		}
		// Each partition delivers in end order, as a database's commit
		// log would: with lateness 40 some long transactions arrive late.
		for _, ps := range parts {
			slices.SortStableFunc(ps, func(a, b history.Txn) int { return int(a.End - b.End) })
		}
		var traces []string
		for order := range 4 {
			// Interleavings 2 and 3 also restart from a checkpoint (D2)
			// at a random event.
			traces = append(traces, runInterleaving(t, parts, rand.New(rand.NewPCG(seed, uint64(order)+100)), order >= 2))
		}
		for i := 1; i < len(traces); i++ {
			if traces[i] != traces[0] {
				t.Fatalf("seed %d: interleaving %d steps differently:\n%s\ninterleaving 0:\n%s", seed, i, traces[i], traces[0])
			}
		}
	}
}

// runInterleaving feeds parts merged at random (each partition's order
// kept) and returns the trace of every step. With restart, it takes a
// checkpoint (D2: the window's and the engine's snapshots and State,
// between two Readys) after a random event and continues on a driver
// rebuilt from it, the old one dropped.
func runInterleaving(t *testing.T, parts [][]history.Txn, rng *rand.Rand, restart bool) string {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialEmpty
	cfg := Config{Tick: 25, Lateness: 40}
	win, err := window.New(window.Config{Partitions: len(parts), Lateness: cfg.Lateness, InDoubt: opts.InDoubt})
	if err != nil {
		t.Fatal(err)
	}
	d := New(cfg, win, online.NewOnlineConfig(opts, online.OnlineConfig{Evict: true}), NewState(len(parts)))
	var b strings.Builder
	drain := func() {
		for d.HasReady() {
			rd, err := d.Ready(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			printReady(&b, &rd)
		}
	}
	next := make([]int, len(parts))
	total := 0
	for _, ps := range parts {
		total += len(ps)
	}
	restartAt := -1
	if restart {
		restartAt = rng.IntN(total)
	}
	for fed := 0; ; fed++ {
		if fed == restartAt {
			d = restarted(t, d, cfg, opts, len(parts))
		}
		var live []int
		for p := range parts {
			if next[p] < len(parts[p]) {
				live = append(live, p)
			}
		}
		if len(live) == 0 {
			break
		}
		p := live[rng.IntN(len(live))]
		x := parts[p][next[p]]
		// A late event is dead-lettered by its partition's watermark
		// alone, and its writes queued by its partition's greatest start:
		// both alike in every interleaving.
		d.Accept(p, int64(next[p]), x, 0)
		next[p]++
		drain()
	}
	d.EndInput()
	drain()
	rd, err := d.Final(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	printReady(&b, &rd)
	return b.String()
}

// restarted checkpoints d and returns a driver restored from the bytes.
func restarted(t *testing.T, d *Driver, cfg Config, opts history.Options, parts int) *Driver {
	wsnap := d.Window().Snapshot()
	esnap, err := d.Engine().(*online.Online).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ssnap, err := json.Marshal(d.State())
	if err != nil {
		t.Fatal(err)
	}
	win, err := window.Restore(d.Window().Config(), wsnap)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := online.RestoreOnline(opts, esnap)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(ssnap, &st); err != nil {
		t.Fatal(err)
	}
	return New(cfg, win, eng, st)
}
