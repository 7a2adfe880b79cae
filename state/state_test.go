package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ckpt is checkpoint number n as a test writes it: every field derives
// from n, so a mix of two checkpoints is detectable.
func ckpt(n uint64) *Checkpoint {
	return &Checkpoint{
		Offsets:  []int64{int64(n), int64(2 * n), int64(3 * n)},
		Engine:   bytes.Repeat([]byte{byte(n)}, 100+int(n%7)*1000),
		Window:   []byte(fmt.Sprintf("window %d", n)),
		Runner:   []byte(fmt.Sprintf("runner %d", n)),
		Counters: map[string]uint64{"accepted": n, "dead": n / 2},
		// Window IDs are stored apart, each checkpoint adding its own.
		WindowIDs: []byte(fmt.Sprintf("ids %d;", n)),
	}
}

// idsUpTo is what Load returns as the window IDs of checkpoint n.
func idsUpTo(n uint64) []byte {
	var b []byte
	for i := uint64(1); i <= n; i++ {
		b = fmt.Appendf(b, "ids %d;", i)
	}
	return b
}

// consistent checks that c is exactly checkpoint c.Seq as ckpt wrote it.
func consistent(t *testing.T, c *Checkpoint) {
	t.Helper()
	want := ckpt(c.Seq)
	if !slices.Equal(c.Offsets, want.Offsets) || !bytes.Equal(c.Engine, want.Engine) ||
		!bytes.Equal(c.Window, want.Window) || !bytes.Equal(c.Runner, want.Runner) ||
		c.Counters["accepted"] != c.Seq || c.Counters["dead"] != c.Seq/2 || !bytes.Equal(c.WindowIDs, idsUpTo(c.Seq)) {
		t.Fatalf("checkpoint %d is not the one saved under that number: offsets %v window %q runner %q counters %v window ids %q",
			c.Seq, c.Offsets, c.Window, c.Runner, c.Counters, c.WindowIDs)
	}
}

func open(t *testing.T, fs vfs.FS, opts Options) *Store {
	t.Helper()
	opts.FS = fs
	s, err := Open("state", opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCrashBetweenBatches: a power loss after Save returned, with any
// share of the unsynced data surviving, keeps exactly that checkpoint
// (S1).
func TestCrashBetweenBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	fs := vfs.NewCrashableMem()
	s := open(t, fs, Options{})
	defer s.Close()
	for n := uint64(1); n <= 40; n++ {
		c := ckpt(n)
		if err := s.Save(c, []string{fmt.Sprintf("alert-%d", n)}, nil); err != nil {
			t.Fatal(err)
		}
		if c.Seq != n {
			t.Fatalf("Save assigned seq %d, want %d", c.Seq, n)
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
		r := open(t, clone, Options{})
		got, ok, err := r.Load()
		if err != nil || !ok {
			t.Fatalf("after power loss at checkpoint %d: ok=%v err=%v", n, ok, err)
		}
		if got.Seq != n {
			t.Fatalf("after power loss: checkpoint %d, want %d (a synced batch was lost)", got.Seq, n)
		}
		consistent(t, got)
		if ok, _ := r.AlertEmitted(fmt.Sprintf("alert-%d", n)); !ok {
			t.Fatalf("alert id of checkpoint %d lost", n)
		}
		r.Close()
	}
}

// TestCrashInsideBatch takes power-loss clones while checkpoints are
// being written: every clone reopens to one whole checkpoint, at least
// the last one whose Save had returned when the clone began (S1).
func TestCrashInsideBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	fs := vfs.NewCrashableMem()
	s := open(t, fs, Options{})
	var done atomic.Uint64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := uint64(1); ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.Save(ckpt(n), nil, nil); err != nil {
				t.Error(err)
				return
			}
			done.Store(n)
		}
	}()
	clones := 0
	for clones < 30 {
		before := done.Load()
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
		clones++
		r := open(t, clone, Options{})
		got, ok, err := r.Load()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !ok && before > 0:
			t.Fatalf("clone %d: no checkpoint, but %d were durable", clones, before)
		case ok:
			if got.Seq < before {
				t.Fatalf("clone %d: checkpoint %d, but %d was durable", clones, got.Seq, before)
			}
			consistent(t, got)
		}
		r.Close()
	}
	close(stop)
	wg.Wait()
	s.Close()
}

func TestNewerFormatRefused(t *testing.T) {
	fs := vfs.NewMem()
	s := open(t, fs, Options{})
	if err := s.SetFormatForTest(FormatVersion + 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open("state", Options{FS: fs})
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "newer") ||
		!strings.Contains(err.Error(), fmt.Sprint(FormatVersion+1)) {
		t.Fatalf("newer format: got %v, want ErrFormat naming the version and saying newer", err)
	}
}

func TestForeignDirectoryRefused(t *testing.T) {
	fs := vfs.NewMem()
	s := open(t, fs, Options{})
	if err := s.db.Delete(keyFormat, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Set([]byte("other"), []byte("data"), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open("state", Options{FS: fs}); !errors.Is(err, ErrFormat) {
		t.Fatalf("pebble data without our version: got %v, want ErrFormat", err)
	}
}

func TestSecondOpenLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: got %v, want ErrLocked naming the directory", err)
	}
	s.Close()
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	s.Close()
}

func TestSourceMismatch(t *testing.T) {
	fs := vfs.NewMem()
	s := open(t, fs, Options{Source: "kafka:a"})
	s.Close()
	if _, err := Open("state", Options{FS: fs, Source: "kafka:b"}); !errors.Is(err, ErrSource) {
		t.Fatalf("other source: got %v, want ErrSource", err)
	}
	s = open(t, fs, Options{Source: "kafka:a"})
	s.Close()
}

// TestOutboxSurvivesPowerLoss: Put and Done are durable on their own
// (S4).
func TestOutboxSurvivesPowerLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s := open(t, fs, Options{})
	defer s.Close()
	if err := s.Put("a1", []byte(`{"id":"a1"}`), []string{"file", "webhook"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("a2", []byte(`{"id":"a2"}`), []string{"file"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Done("a1", "file"); err != nil {
		t.Fatal(err)
	}
	if err := s.Done("a2", "file"); err != nil {
		t.Fatal(err)
	}
	r := open(t, fs.CrashClone(vfs.CrashCloneCfg{}), Options{})
	defer r.Close()
	p, err := r.Pending()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || p[0].ID != "a1" || string(p[0].Payload) != `{"id":"a1"}` || !slices.Equal(p[0].Sinks, []string{"webhook"}) {
		t.Fatalf("pending after power loss: %+v, want a1 owed to webhook only", p)
	}
	if err := r.Done("a1", "webhook"); err != nil {
		t.Fatal(err)
	}
	if p, _ := r.Pending(); len(p) != 0 {
		t.Fatalf("pending after every sink acknowledged: %+v", p)
	}
}

func TestRetention(t *testing.T) {
	fs := vfs.NewMem()
	s := open(t, fs, Options{Retention: Retention{MaxAge: 100, MaxBytes: 50}})
	defer s.Close()
	save := func(bodies ...Body) {
		t.Helper()
		if err := s.Save(ckpt(1), nil, bodies); err != nil {
			t.Fatal(err)
		}
	}
	ten := bytes.Repeat([]byte("x"), 10)
	save(Body{ID: "t1", Time: 10, Data: ten}, Body{ID: "t2", Time: 20, Data: ten})
	save(Body{ID: "t3", Time: 115, Data: ten}) // t1 is now older than 100
	if _, err := s.Body("t1"); !isGone(err, "t1") {
		t.Fatalf("t1 past max age: got %v, want ErrBodyGone", err)
	}
	if b, err := s.Body("t2"); err != nil || !bytes.Equal(b, ten) {
		t.Fatalf("t2 within age: %q %v", b, err)
	}
	// 20+10+10+10 bytes of t2..t5 (t2, t3, t4, t5 = 40) then t6: 50, t7 over.
	save(Body{ID: "t4", Time: 116, Data: ten}, Body{ID: "t5", Time: 117, Data: ten}, Body{ID: "t6", Time: 118, Data: ten})
	save(Body{ID: "t7", Time: 119, Data: ten})
	if _, err := s.Body("t2"); !isGone(err, "t2") {
		t.Fatalf("t2 past max bytes: got %v", err)
	}
	for _, id := range []string{"t3", "t4", "t5", "t6", "t7"} {
		if _, err := s.Body(id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if n, _ := s.BodyBytes(); n != 50 {
		t.Fatalf("stored %d body bytes, want 50", n)
	}
	// A body added again after a replay is not counted twice.
	save(Body{ID: "t7", Time: 119, Data: ten})
	if n, _ := s.BodyBytes(); n != 50 {
		t.Fatalf("replayed body counted twice: %d bytes", n)
	}
	var gone *ErrBodyGone
	if _, err := s.Body("t2"); !errors.As(err, &gone) || gone.Cutoff != 20 {
		t.Fatalf("cutoff: %v", err)
	}
}

func isGone(err error, id string) bool {
	var g *ErrBodyGone
	return errors.As(err, &g) && g.ID == id && strings.Contains(err.Error(), id)
}

// TestOffsetsShrink: a checkpoint with fewer partitions leaves no stale
// offsets behind.
func TestOffsetsShrink(t *testing.T) {
	s := open(t, vfs.NewMem(), Options{})
	defer s.Close()
	if err := s.Save(&Checkpoint{Offsets: []int64{5, 6, 7}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(&Checkpoint{Offsets: []int64{8}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	c, _, err := s.Load()
	if err != nil || !slices.Equal(c.Offsets, []int64{8}) || c.Seq != 2 {
		t.Fatalf("load: %+v %v", c, err)
	}
}
