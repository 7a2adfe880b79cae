package weakonline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// failingBodies is a body file whose writes fail after the first
// okWrites.
type failingBodies struct {
	*online.MemBodyFile
	okWrites int
}

func (f *failingBodies) Write(p []byte) (int, error) {
	if f.okWrites == 0 {
		return 0, errors.New("disk full")
	}
	f.okWrites--
	return f.MemBodyFile.Write(p)
}

// TestBodiesLeaveTheHeap (docs/SEMANTICS.md §5 "Bodies at read atomic
// and causal leave the heap"): at read atomic and causal a closed
// member's ops go to the body file and come back whole, from the buffer
// or from the file, in the instance, in an alert's core and id, and in a
// snapshot, which a restored engine without a body file reads as the
// keeping engine's; a write that fails loses nothing and stops the
// spilling; read committed, where retirement reads the bodies, spills
// nothing.
func TestBodiesLeaveTheHeap(t *testing.T) {
	ra1 := weakRetireCases[0]
	for _, c := range []struct {
		name  string
		level history.Level
		flush int
		file  func() online.BodyFile
		// spilled is how many bodies are in the file (or its buffer)
		// at the end: every closed one (-1), or the writes that
		// succeeded and the one whose write failed (kept buffered).
		spilled int
	}{
		{"buffered", history.ReadAtomic, 0, func() online.BodyFile { return online.NewMemBodyFile(false) }, -1},
		{"written", history.ReadAtomic, 1, func() online.BodyFile { return online.NewMemBodyFile(false) }, -1},
		{"causal written", history.Causal, 1, func() online.BodyFile { return online.NewMemBodyFile(false) }, -1},
		{"write fails after 3", history.ReadAtomic, 1, func() online.BodyFile {
			return &failingBodies{online.NewMemBodyFile(false), 3}
		}, 4},
		{"write fails at once", history.ReadAtomic, 1, func() online.BodyFile {
			return &failingBodies{online.NewMemBodyFile(false), 0}
		}, 1},
		{"read committed", history.ReadCommitted, 1, func() online.BodyFile { return online.NewMemBodyFile(false) }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := ra1
			cs.level = c.level
			if c.level == history.ReadCommitted {
				cs.class, cs.members = "", nil
			}
			keep := runWeakRetire(t, cs, Config{NoRetire: true, NoFast: true})
			var e *Engine
			got := runWeakRetireEngine(t, cs, Config{Bodies: c.file(), bodyFlush: c.flush}, &e)
			if !slices.Equal(got, keep) {
				t.Fatalf("alerts %v, the keeping engine's %v", got, keep)
			}
			n, size := e.Spilled()
			want := c.spilled
			if want < 0 {
				want = len(e.txns) // all closed and stepped
			}
			if n != want {
				t.Fatalf("%d bodies spilled (%d bytes), want %d", n, size, want)
			}
			whole := make([]history.Txn, len(e.txns))
			for i := range e.txns {
				if e.store.off[i] >= 0 && e.txns[i].Ops != nil {
					t.Fatalf("%s spilled but its ops are on the heap", e.names[i])
				}
				var err error
				if whole[i], err = e.txn(i); err != nil {
					t.Fatal(err)
				}
				if len(whole[i].Ops) == 0 {
					t.Fatalf("%s came back without its ops", e.names[i])
				}
			}
			snap, err := e.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Restore(e.opts, Config{NoRetire: true}, snap)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.txns) != fmt.Sprint(whole) {
				t.Fatalf("restored %v\nwant %v", r.txns, whole)
			}
		})
	}
}

// runWeakRetireEngine is runWeakRetire, handing back the engine.
func runWeakRetireEngine(t *testing.T, c weakRetireCase, cfg Config, out **Engine) []string {
	t.Helper()
	var ids []string
	e := feedWeakRetire(t, c, cfg, func(a *online.Alert) { ids = append(ids, a.ID) })
	*out = e
	return ids
}

// feedWeakRetire releases, closes and steps c's transactions one by one
// through a new engine with cfg, calling fn for each alert.
func feedWeakRetire(t *testing.T, c weakRetireCase, cfg Config, fn func(a *online.Alert)) *Engine {
	t.Helper()
	opts := history.DefaultOptions()
	opts.Level = c.level
	e, err := New(opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range weakRetireTxns(c) {
		h, err := history.ParseCompact(s)
		if err != nil {
			t.Fatal(err)
		}
		h.Txns[0].Pos = history.Pos{}
		e.Release(h.Txns[0])
		e.Close(h.Txns[0].ID)
		as, err := e.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			fn(a)
		}
	}
	return e
}
