package incremental

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestEvictWritersOfAKeyInOneStep: writers of one key, all closed, leave
// in one step, each overwriting the one before as the live version. W1
// stays a ghost (of y); overwritten on x earlier in the same step, it must
// not hold back W3 (R4 holds for W3 through W2). Otherwise a chain of
// writers of a key drains at one writer per step.
func TestEvictWritersOfAKeyInOneStep(t *testing.T) {
	h, err := history.ParseCompact("W1[0,10] w x1, w y1 · W2[20,30] w x2 · W3[40,50] w x3")
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	o.Release(h.Txns...)
	o.Close("W1", "W2", "W3")
	if _, err := o.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if in := o.inWindow("W1", "W2", "W3"); len(in) > 0 {
		t.Fatalf("%v still in the window (stats %+v)", in, o.Stats())
	}
}

// inWindow returns those of ids still in the window with their bodies.
func (o *Online) inWindow(ids ...string) []string {
	var in []string
	for _, id := range ids {
		if i := o.index[id]; o.ev.Member[i] && o.ev.GhostKeys[i] == nil {
			in = append(in, id)
		}
	}
	return in
}
