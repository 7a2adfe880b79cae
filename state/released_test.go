package state

import (
	"fmt"
	"slices"
	"testing"
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
