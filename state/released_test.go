package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestReleasedBodiesAccumulate: each checkpoint adds only the bodies
// released since the last one, and Load returns all of them in order
// after a reopen.
func TestReleasedBodiesAccumulate(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all [][]byte
	for ck := range 3 {
		var fresh [][]byte
		for i := range 2 + ck {
			fresh = append(fresh, fmt.Appendf(nil, "body %d.%d", ck, i))
		}
		c := &Checkpoint{Offsets: []int64{int64(ck)}, Engine: []byte("e"), Released: fresh, ReleasedFrom: len(all)}
		if err := s.Save(c, nil, nil); err != nil {
			t.Fatal(err)
		}
		all = append(all, fresh...)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, ok, err := s.Load()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if c.ReleasedFrom != 0 || !slices.EqualFunc(c.Released, all, slices.Equal[[]byte]) {
		t.Fatalf("loaded %q from %d, want %q", c.Released, c.ReleasedFrom, all)
	}
}

// TestReleasedBodiesOldForm: bodies stored one per key, as state format 2
// first wrote them, still read, and a run after them continues the
// sequence; a run cut short is an error.
func TestReleasedBodiesOldForm(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := [][]byte{[]byte("{\"id\":\"a\"}"), {0x01, 'b'}}
	for i, b := range all {
		if err := s.db.Set(relKey(i), b, nil); err != nil {
			t.Fatal(err)
		}
	}
	fresh := [][]byte{{0x01, 'c'}, {}, {0x01, 'e'}}
	if err := s.Save(&Checkpoint{Offsets: []int64{1}, Released: fresh, ReleasedFrom: len(all)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	all = append(all, fresh...)
	var got [][]byte
	if err := s.EachReleased(func(b []byte) error { got = append(got, slices.Clone(b)); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, all, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Fatalf("read %q, want %q", got, all)
	}
	if err := s.db.Set(relKey(len(all)), []byte{bodyRun, 5, 'x'}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.EachReleased(func([]byte) error { return nil }); err == nil {
		t.Fatal("a run cut short read without an error")
	}
}

// TestBlobBodiesSurvivePowerLoss: released bodies big enough to go to
// Pebble's blob files (value separation), written until memtables flush,
// come back whole and in order after a power loss at every checkpoint,
// and Size counts them after a reopen.
func TestBlobBodiesSurvivePowerLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	fs := vfs.NewCrashableMem()
	s := open(t, fs, Options{})
	defer s.Close()
	var all [][]byte
	for n := uint64(1); n <= 12; n++ {
		var fresh [][]byte
		for range 100 {
			b := make([]byte, 8<<10)
			for i := range b {
				b[i] = byte(rng.Uint32()) // incompressible: Size must see them
			}
			fresh = append(fresh, b)
		}
		c := ckpt(n)
		c.Released, c.ReleasedFrom = fresh, len(all)
		if err := s.Save(c, nil, nil); err != nil {
			t.Fatal(err)
		}
		all = append(all, fresh...)
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rng})
		r := open(t, clone, Options{})
		got, ok, err := r.Load()
		if err != nil || !ok || got.Seq != n {
			t.Fatalf("after power loss at checkpoint %d: ok=%v err=%v", n, ok, err)
		}
		consistent(t, got)
		if !slices.EqualFunc(got.Released, all, slices.Equal[[]byte]) {
			t.Fatalf("after power loss at checkpoint %d: %d released bodies, want %d, or not the same", n, len(got.Released), len(all))
		}
		if size, want := r.Size(), int64(len(all)*8<<10); size < want {
			t.Fatalf("reopened at checkpoint %d: Size %d, below the %d bytes of bodies", n, size, want)
		}
		r.Close()
	}
	blobs := 0
	names, _ := fs.List("state")
	for _, name := range names {
		if strings.HasSuffix(name, ".blob") {
			blobs++
		}
	}
	if blobs == 0 {
		t.Fatal("no blob files written: the test does not reach value separation")
	}
}

// TestVersion2Upgraded: a version 2 directory opens as version 4 (an
// earlier binary then refuses it rather than look for bodies under r/),
// its r/ bodies still load, and the checkpoint that says DropReleased
// deletes them.
func TestVersion2Upgraded(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{{0x01, 'a'}, {0x01, 'b'}}
	if err := s.Save(&Checkpoint{Offsets: []int64{1}, Engine: []byte("e"), Released: bodies}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetFormatForTest(formatBodiesInPebble); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if v, _, err := s.get(keyFormat); err != nil || string(v) != "\x00\x00\x00\x04" {
		t.Fatalf("format key %q (%v), want version 4", v, err)
	}
	c, ok, err := s.Load()
	if err != nil || !ok || !slices.EqualFunc(c.Released, bodies, slices.Equal[[]byte]) {
		t.Fatalf("loaded %q (%v, %v), want %q", c.Released, ok, err, bodies)
	}
	if err := s.Save(&Checkpoint{Offsets: []int64{2}, Engine: []byte("e2"), DropReleased: true}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if c, _, err = s.Load(); err != nil || len(c.Released) != 0 {
		t.Fatalf("after DropReleased: %d bodies (%v)", len(c.Released), err)
	}
	if s.BodyFile() != dir+"/"+bodyFileName {
		t.Fatalf("body file %s is not in the directory", s.BodyFile())
	}
	s.Close()
}
