package stamponline

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/online"
)

// TestKeyedBodyRoundTrip: a body written with its keys as numbers
// (online.AppendBodyKeyed) reads back (DecodeBodyKeyed, with the
// numbering's keys) as the same transaction AppendBody's text encoding
// reads back as, for generated transactions of every shape (registers,
// lists, aborted and unknown ones, sessions), so that the call log gives
// the black-box engine the calls the driver made whichever way it wrote
// them; and an id outside the numbering is a malformed record, not a
// key made up.
func TestKeyedBodyRoundTrip(t *testing.T) {
	h, _, err := gen.GenerateStamps(gen.Config{Txns: 300, Seed: 7, Inject: []string{"lost-update"}, UnknownRatio: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	l := newEngine(history.DefaultOptions(), Config{}).log
	for i := range h.Txns {
		x := &h.Txns[i]
		ids := slices.Clone(l.keyIDs(x))
		want, err := online.DecodeBody(online.AppendBody(nil, x))
		if err != nil {
			t.Fatal(err)
		}
		b := online.AppendBodyKeyed(nil, x, ids)
		got, err := online.DecodeBodyKeyed(b, l.names)
		if err != nil {
			t.Fatalf("txn %s: %v", x.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("txn %s: keyed %+v, text %+v", x.ID, got, want)
		}
		if len(x.Ops) > 0 {
			if _, err := online.DecodeBodyKeyed(b, l.names[:ids[len(ids)-1]]); err == nil {
				t.Fatalf("txn %s read with its last key missing from the numbering", x.ID)
			}
		}
	}
}

// downgrade turns a checkpoint (the engine's snapshot and its call log
// up to the snapshot's LogEnd) into the one a build before the log's key
// numbering would have written: every release rewritten with its keys'
// text (recRelease), version 2, no LogKeys, LogEnd and CatchOff moved to
// the same records' new offsets. The fast path's Keys stay in the
// log's id order, which is one in which the old build could have
// numbered them.
func downgrade(t testing.TB, log *online.MemBodyFile, snap []byte) (*online.MemBodyFile, []byte) {
	t.Helper()
	var s snapshot
	if err := json.Unmarshal(snap, &s); err != nil {
		t.Fatal(err)
	}
	old := &callLog{file: log, size: s.LogEnd, names: s.LogKeys}
	out := online.NewMemBodyFile(true)
	nl := &callLog{file: out}
	at := map[int64]int64{0: 0} // old offset -> new offset, at record boundaries
	off := int64(0)
	for off < s.LogEnd {
		next, err := old.eachFrom(off, func(c *call) (bool, error) {
			switch c.kind {
			case recRelease:
				nl.put(recRelease, online.AppendBody(appendFacts(nil, &c.facts), &c.txn))
			case recClose:
				nl.put(recClose, []byte(c.id))
			case recUnchecked:
				nl.put(recUnchecked, online.AppendBody(nil, &c.txn))
			default:
				nl.put(c.kind, nil)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := nl.end()
		if err != nil {
			t.Fatal(err)
		}
		off = next
		at[off] = n
	}
	catch, ok := at[s.CatchOff]
	if !ok {
		t.Fatalf("CatchOff %d is not a record boundary", s.CatchOff)
	}
	s.Version, s.LogKeys, s.LogEnd, s.CatchOff = 2, nil, at[s.LogEnd], catch
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	return out, b
}

// TestCheckpointFromVersion2: a checkpoint a build before the call log's
// key numbering took (snapshot version 2, a log of releases with their
// keys' text) restores in this build, which goes on writing numbered
// releases after the old ones: on the histories of
// TestCheckpointRestart, restarting from such a checkpoint at every step
// boundary and at random, before, across and after a fallback, gives
// the alert ids, the fast path's outcome and the calls of an
// uninterrupted run.
func TestCheckpointFromVersion2(t *testing.T) {
	n := sweep(t, 40)
	for _, lv := range []history.Level{history.StrongSessionSerializable, history.SnapshotIsolation} {
		t.Run(lv.String(), func(t *testing.T) {
			var all crashStats
			cfg := oracle.DefaultTinyConfig()
			cfg.Timestamps, cfg.Sessions = true, true
			for i := 0; i < n+2; i++ {
				rng := rand.New(rand.NewPCG(uint64(i), 2903))
				h := restartHistory(t, rng, cfg, i, n)
				if h == nil {
					continue
				}
				opts := history.DefaultOptions()
				opts.Level = lv
				if i >= n {
					opts.InitialState, opts.InDoubt = history.InitialEmpty, 5_000_000
				}
				for k := 0; k < 2; k++ {
					f := randomFeed(rng, h)
					f.late, f.downgrade = true, true
					if i >= n {
						f.tick *= 1_000_000
						if f.lateness >= 0 {
							f.lateness *= 1_000_000
						}
					}
					want, ref := runStream(t, h, opts, f)
					got, eng, st := runCrashing(t, h, opts, f, rng, []int{3, -1}[k])
					all.crashes += st.crashes
					all.afterFallback += st.afterFallback
					all.acrossFallback += st.acrossFallback
					if w, g := alertIDSet(want), alertIDSet(got); !slices.Equal(w, g) {
						t.Fatalf("history %d feed %+v (%+v): alert ids %v, uninterrupted %v", i, f, st, g, w)
					}
					wr, wf := ref.FastPath()
					gr, gf := eng.FastPath()
					if wr != gr || wf != gf {
						t.Fatalf("history %d feed %+v (%+v): fast path %d %q, uninterrupted %d %q", i, f, st, gr, gf, wr, wf)
					}
					if !reflect.DeepEqual(logCalls(t, ref), logCalls(t, eng)) {
						t.Fatalf("history %d feed %+v (%+v): the call log differs from the uninterrupted run's", i, f, st)
					}
				}
			}
			if all.crashes == 0 || all.afterFallback == 0 || all.acrossFallback == 0 {
				t.Errorf("the sweep misses a case: %+v", all)
			}
		})
	}
}
