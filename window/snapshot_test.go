package window

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
						if len(ids) > 0 {
							t.Fatalf("SnapshotApart stored %d bytes of IDs apart", len(ids))
						}
						mark = next
						// Pieces a version-2 binary stored are not read.
						if b, err = RestoreApart(cfg, snap, []byte("\x05stale")); err != nil {
							t.Fatalf("restore apart at event %d: %v", i, err)
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
}

// TestRestoreLegacy reads snapshots version 1 and 2 (IDs apart), as the
// binary before the ID horizon wrote them (testdata-legacy, outside
// testdata/ whose files are scripts: 20
// transactions t0..t19 at starts 0..19 over 2 partitions, lateness 10, each
// released): their IDs are remembered as of the greatest start, so a
// repeat is still a duplicate until W is a lateness past it, and the IDs
// apart are checked as before (cut or overlapping pieces are refused).
func TestRestoreLegacy(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata-legacy", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cfg := Config{Partitions: 2, Lateness: 10}
	v1 := read("v1.snap")
	v2, ids := read("v2.snap"), read("v2.ids")
	w1, err := Restore(cfg, v1)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := RestoreApart(cfg, v2, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Window{w1, w2} {
		if got := w.Stats().IDs; got != 20 {
			t.Fatalf("%d IDs remembered, want 20", got)
		}
		if d := w.Add(0, history.Txn{ID: "t3", HasTime: true, Start: 25, End: 26}); d == nil || d.Reason != DuplicateID {
			t.Fatalf("repeat of t3: %v", d)
		}
		// W moves to 40-10 = 30 > 19+10: the old IDs are forgotten, and
		// t4 at 45 is a new transaction.
		w.Add(0, history.Txn{ID: "u0", HasTime: true, Start: 40, End: 41})
		w.Add(1, history.Txn{ID: "u1", HasTime: true, Start: 40, End: 41})
		if d := w.Add(1, history.Txn{ID: "t4", HasTime: true, Start: 45, End: 46}); d != nil {
			t.Fatalf("t4 reused past the horizon: %v", d)
		}
	}
	for n := range len(ids) {
		if _, err := RestoreApart(cfg, v2, ids[:n]); err == nil {
			t.Fatalf("IDs apart cut to %d of %d bytes: no error", n, len(ids))
		}
	}
	if _, err := RestoreApart(cfg, v2, append(bytes.Clone(ids), ids[:3]...)); err == nil {
		t.Fatal("an ID stored twice: no error")
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		c := bytes.Clone(ids)
		c[r.IntN(len(c))] ^= byte(1 + r.IntN(255))
		RestoreApart(cfg, v2, c) // must not panic
	}
}
