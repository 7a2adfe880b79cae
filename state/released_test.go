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
