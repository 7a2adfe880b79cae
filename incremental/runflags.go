package incremental

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// runFlags is a per-transaction flag (closed, quarantined, in the
// instance) that snapshots store as run lengths: alternating runs of
// false and true, the first of false (possibly empty). Stored as one
// JSON bool per transaction, the three flags made every checkpoint grow
// with the whole stream, some 18 bytes per transaction ever released
// (180 MB per checkpoint after 10M); nearly all of them are one long run
// of evicted, closed transactions.
type runFlags []bool

// MarshalJSON implements json.Marshaler.
func (f runFlags) MarshalJSON() ([]byte, error) {
	if f == nil {
		return []byte("null"), nil
	}
	runs := []int{}
	cur, n := false, 0
	for _, v := range f {
		if v != cur {
			runs = append(runs, n)
			cur, n = v, 0
		}
		n++
	}
	runs = append(runs, n)
	return json.Marshal(runs)
}

// UnmarshalJSON implements json.Unmarshaler. It also reads the one-bool-
// per-transaction form of snapshot version 2.
func (f *runFlags) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = nil
		return nil
	}
	if inner := bytes.TrimSpace(bytes.TrimPrefix(b, []byte("["))); len(inner) > 0 && (inner[0] == 't' || inner[0] == 'f') {
		var old []bool
		if err := json.Unmarshal(b, &old); err != nil {
			return err
		}
		*f = old
		return nil
	}
	var runs []int
	if err := json.Unmarshal(b, &runs); err != nil {
		return err
	}
	total := 0
	for _, n := range runs {
		if n < 0 || total+n < total {
			return fmt.Errorf("flag runs: bad run length %d", n)
		}
		total += n
	}
	out := make([]bool, 0, total)
	for i, n := range runs {
		for range n {
			out = append(out, i%2 == 1)
		}
	}
	*f = out
	return nil
}
