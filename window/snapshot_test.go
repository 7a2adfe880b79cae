package window

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestSnapshotContinues: a window restored from a snapshot taken at a
// random moment behaves exactly like the original for the rest of the
// stream (dead letters with their details, releases with their bodies,
// closings, counters), and snapshots of the two are equal bytes.
func TestSnapshotContinues(t *testing.T) {
	for seed := range seeds(t, 300) {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		cfg := randConfig(r, true)
		streams := genStreams(r, cfg, 20+r.IntN(80), true)
		for _, s := range streams {
			for i := range s {
				s[i].Session, s[i].HasSession = fmt.Sprint("s", i%3), i%2 == 0
				s[i].Pos = history.Pos{Source: "topic", Offset: int64(i)}
				if i%5 == 0 {
					s[i].Ops = append(s[i].Ops, history.Op{Kind: history.Read, Key: "l", IsList: true, List: []history.Value{"1", `"a"`}})
				}
			}
		}
		arr := interleave(r, streams, 0)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var b *Window // the restored copy, once there is one
			same := func(what string) {
				t.Helper()
				if b == nil {
					return
				}
				if !reflect.DeepEqual(a.Stats(), b.Stats()) {
					t.Fatalf("%s: stats %+v, restored %+v", what, a.Stats(), b.Stats())
				}
				if !bytes.Equal(a.Snapshot(), b.Snapshot()) {
					t.Fatalf("%s: snapshots differ", what)
				}
			}
			// Checkpoints that store the ID set apart keep what they
			// stored, as the state directory does, and add what is new.
			var idsApart []byte
			mark := 0
			for i, x := range arr {
				if r.IntN(15) == 0 {
					if r.IntN(2) == 0 {
						snap := a.Snapshot()
						if b, err = Restore(cfg, snap); err != nil {
							t.Fatalf("restore at event %d: %v", i, err)
						}
					} else {
						snap, ids, next := a.SnapshotApart(mark)
						idsApart, mark = append(idsApart, ids...), next
						if b, err = RestoreApart(cfg, snap, idsApart); err != nil {
							t.Fatalf("restore apart at event %d: %v", i, err)
						}
						if _, err := Restore(cfg, snap); err == nil {
							t.Fatalf("a snapshot with its IDs apart restored without them")
						}
					}
					same(fmt.Sprintf("restore at event %d", i))
				}
				if r.IntN(30) == 0 {
					p := r.IntN(cfg.Partitions)
					a.MarkIdle(p)
					if b != nil {
						b.MarkIdle(p)
					}
				}
				da := a.Add(x.p, x.t)
				if b != nil {
					if db := b.Add(x.p, x.t); !reflect.DeepEqual(da, db) {
						t.Fatalf("event %d: dead letter %v, restored %v", i, da, db)
					}
				}
				if r.IntN(3) == 0 {
					ra, ca := a.Release(nil), a.PopClosed(nil)
					if b != nil {
						rb, cb := b.Release(nil), b.PopClosed(nil)
						if !reflect.DeepEqual(ra, rb) || !reflect.DeepEqual(ca, cb) {
							t.Fatalf("event %d: released %v closed %v, restored %v %v", i, ids(ra), ca, ids(rb), cb)
						}
					}
				}
				same(fmt.Sprintf("event %d", i))
			}
			if b == nil {
				return
			}
			a.Close()
			b.Close()
			ra, ca := a.Release(nil), a.PopClosed(nil)
			rb, cb := b.Release(nil), b.PopClosed(nil)
			if !reflect.DeepEqual(ra, rb) || !reflect.DeepEqual(ca, cb) {
				t.Fatalf("at close: released %v closed %v, restored %v %v", ids(ra), ca, ids(rb), cb)
			}
			same("close")
		})
	}
}

func TestRestoreRefusesOtherConfig(t *testing.T) {
	cfg := Config{Partitions: 3, Lateness: 10, Skew: 1, InDoubt: 5}
	w, _ := New(cfg)
	w.Add(0, history.Txn{ID: "a", HasTime: true, Start: 1, End: 2})
	snap := w.Snapshot()
	other := cfg
	other.Lateness = 11
	if _, err := Restore(other, snap); !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), "lateness") {
		t.Fatalf("other lateness: %v", err)
	}
	other = cfg
	other.Partitions = 4
	if _, err := Restore(other, snap); !errors.Is(err, ErrSnapshot) || !strings.Contains(err.Error(), "partitions") {
		t.Fatalf("other partitions: %v", err)
	}
}

// TestRestoreCorrupt: every truncation and a sample of flipped bytes give
// an error or a window, never a panic.
func TestRestoreCorrupt(t *testing.T) {
	cfg := Config{Partitions: 2, Lateness: 10}
	w, _ := New(cfg)
	for i := range 20 {
		w.Add(i%2, history.Txn{ID: fmt.Sprint("t", i), HasTime: true, Start: int64(i), End: int64(i + 3),
			Ops: []history.Op{{Kind: history.Write, Key: "x", Value: "1"}}})
		w.Release(nil)
	}
	snap := w.Snapshot()
	for n := range len(snap) {
		if _, err := Restore(cfg, snap[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(snap))
		}
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		c := bytes.Clone(snap)
		c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
		Restore(cfg, c) // must not panic
	}
	if _, err := Restore(cfg, append(bytes.Clone(snap), 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
	apart, ids, _ := w.SnapshotApart(0)
	if _, err := RestoreApart(cfg, apart, ids); err != nil {
		t.Fatal(err)
	}
	for n := range len(ids) {
		if _, err := RestoreApart(cfg, apart, ids[:n]); err == nil {
			t.Fatalf("IDs apart cut to %d of %d bytes: no error", n, len(ids))
		}
	}
	for range 2000 {
		c := bytes.Clone(ids)
		c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
		RestoreApart(cfg, apart, c) // must not panic
	}
}
