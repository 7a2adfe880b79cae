package oracle

import (
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// ReplayWitness checks a serial order on its own terms, sharing no code
// with Check's search: every id names a transaction of h once; no aborted
// transaction appears; every committed one does (unknown ones are
// optional); session order and widened real time are respected as the
// level requires; and replaying the order from the initial state, own
// writes visible, reproduces every read of every transaction in it. It
// returns nil or the first problem found.
func ReplayWitness(h *history.History, opts history.Options, order []string) error {
	if err := checkInput(h, opts); err != nil {
		return err
	}
	if opts.Level.BeginCommit() {
		return replaySIWitness(h, opts, order) // si.go: begin and commit events
	}
	byID := make(map[string]int, len(h.Txns))
	for i := range h.Txns {
		byID[h.Txns[i].ID] = i
	}
	pos := make(map[int]int, len(order))
	for p, id := range order {
		i, ok := byID[id]
		if !ok {
			return fmt.Errorf("witness names %s, which is not in the history", id)
		}
		if _, dup := pos[i]; dup {
			return fmt.Errorf("witness names %s twice", id)
		}
		if h.Txns[i].Status == history.Aborted {
			return fmt.Errorf("witness names aborted transaction %s", id)
		}
		pos[i] = p
	}
	for i := range h.Txns {
		if _, in := pos[i]; !in && h.Txns[i].Status == history.Committed {
			return fmt.Errorf("witness leaves out committed transaction %s", h.Txns[i].ID)
		}
	}
	rank := sessionRanks(h)
	for a := range pos {
		for b := range pos {
			if pos[a] < pos[b] && mustPrecede(h, &opts, rank, b, a) {
				return fmt.Errorf("witness puts %s before %s, against %s", h.Txns[a].ID, h.Txns[b].ID, whyOrdered(h, &opts, rank, b, a))
			}
		}
	}

	// Replay. A key absent from these maps holds its initial value.
	lists := h.ListKeys()
	unknownInit := opts.InitialState == history.InitialUnknown
	reg := map[history.Key]history.Value{}
	regInit := map[history.Key]history.Value{}
	app := map[history.Key][]history.Value{}
	lInit := map[history.Key][]history.Value{}
	for _, id := range order {
		t := &h.Txns[byID[id]]
		for n, op := range t.Ops {
			fail := func(got string) error {
				return fmt.Errorf("order %s: txn %s op %d (%s) would read %s", formatOrder(order), t.ID, n, op, got)
			}
			k := op.Key
			switch {
			case op.Kind == history.Write:
				reg[k] = op.Value
			case op.Kind == history.Append:
				app[k] = append(slices.Clone(app[k]), op.Value)
			case lists[k]:
				read := readsList(op)
				init, bound := lInit[k]
				if !unknownInit {
					init, bound = nil, true
				}
				if !bound {
					if len(read) < len(app[k]) || !slices.Equal(read[len(read)-len(app[k]):], app[k]) {
						return fail(fmt.Sprintf("some list ending in %v", app[k]))
					}
					init = slices.Clone(read[:len(read)-len(app[k])])
					lInit[k] = init
				}
				want := append(slices.Clone(init), app[k]...)
				if !slices.Equal(read, want) {
					return fail(fmt.Sprint(want))
				}
			default:
				want, written := reg[k]
				if !written {
					init, bound := regInit[k]
					switch {
					case !unknownInit:
						want = history.Null
					case bound:
						want = init
					default:
						regInit[k] = op.Value
						want = op.Value
					}
				}
				if op.Value != want {
					return fail(string(want))
				}
			}
		}
	}
	return nil
}

func whyOrdered(h *history.History, opts *history.Options, rank []int, a, b int) string {
	if opts.Level.SessionOrder() && sessionBefore(h, rank, a, b) {
		return "session order"
	}
	return fmt.Sprintf("real time (Δ=%d)", opts.Skew)
}
