package online

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamcheck/streamcheck/history"
)

// TestEvictionRules runs the scripts of testdata/evict, one per eviction
// rule of docs/SEMANTICS.md §5 (R1-R5, ghosts, fixed initial values, the
// irrelevance rule), in the compact notation of the EXACTNESS histories.
// Regenerate the expected output with -rewrite, and read the diff.
//
// Commands:
//
//	engine [initial=unknown] [level=LEVEL]  a new evicting engine
//	release                                 the input's transactions, in order
//	close ID... | close all                 they are time-closed
//	step                                    one step; prints the alerts, the
//	                                        window, ghosts, evicted, and why
//	                                        each window member stays
func TestEvictionRules(t *testing.T) {
	datadriven.Walk(t, "testdata/evict", func(t *testing.T, path string) {
		var s ruleScript
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return s.run(t, d)
		})
	})
}

type ruleScript struct {
	o   *Online
	ids []string // released, in order
}

func (s *ruleScript) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "engine":
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "initial":
				if a.Vals[0] == "unknown" {
					opts.InitialState = history.InitialUnknown
				}
			case "level":
				lv, err := history.ParseLevel(a.Vals[0])
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				opts.Level = lv
			default:
				d.Fatalf(t, "unknown argument %s", a.Key)
			}
		}
		s.o, s.ids = NewOnlineConfig(opts, OnlineConfig{Evict: true}), nil
		return ""
	case "release":
		h, err := history.ParseCompact(d.Input)
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		s.o.Release(h.Txns...)
		for i := range h.Txns {
			s.ids = append(s.ids, h.Txns[i].ID)
		}
		return ""
	case "close":
		var ids []string
		for _, a := range d.CmdArgs {
			ids = append(ids, a.Key)
		}
		if len(ids) == 1 && ids[0] == "all" {
			s.o.CloseAll()
		} else {
			s.o.Close(ids...)
		}
		return ""
	case "step":
		pins := map[string]string{}
		pinTrace = func(t *history.Txn, why string) {
			if _, ok := pins[t.ID]; !ok {
				pins[t.ID] = why
			}
		}
		defer func() { pinTrace = nil }()
		alerts, err := s.o.Step(context.Background())
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		var b strings.Builder
		for _, a := range alerts {
			core := slices.Clone(a.Core)
			slices.Sort(core)
			fmt.Fprintf(&b, "alert %s: %s\n", a.Class, strings.Join(core, " "))
		}
		s.describe(&b, pins)
		return b.String()
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

// describe writes the engine's instance: window members with their
// bodies, ghosts with their live keys, and the evicted; then why each
// window member that the step tried to evict stays.
func (s *ruleScript) describe(b *strings.Builder, pins map[string]string) {
	o := s.o
	var window, ghosts, evicted, quarantined []string
	// Release positions are the order of release (index forgets the
	// transactions that left memory).
	for i, id := range s.ids {
		switch {
		case o.quar.get(i):
			quarantined = append(quarantined, id)
		case !o.ev.Member.get(i):
			evicted = append(evicted, id)
		case o.ev.GhostKeys[i] != nil:
			keys := make([]string, len(o.ev.GhostKeys[i]))
			for j, k := range o.ev.GhostKeys[i] {
				keys[j] = unq(k)
			}
			ghosts = append(ghosts, id+"("+strings.Join(keys, ",")+")")
		default:
			window = append(window, id)
		}
	}
	line := func(name string, ids []string) {
		if len(ids) == 0 {
			ids = []string{"-"}
		}
		fmt.Fprintf(b, "%s: %s\n", name, strings.Join(ids, " "))
	}
	line("window", window)
	line("ghosts", ghosts)
	line("evicted", evicted)
	if len(quarantined) > 0 {
		line("quarantined", quarantined)
	}
	if len(o.ev.InitVal) > 0 {
		var kv []string
		for k, v := range o.ev.InitVal {
			kv = append(kv, unq(k)+"="+unq(v))
		}
		slices.Sort(kv)
		line("initial", kv)
	}
	// Initial lists kept under an unknown initial state
	// (evict_list_init.go, IL1).
	if len(o.ev.InitList) > 0 {
		var kv []string
		for k, l := range o.ev.InitList {
			vs := make([]string, len(l))
			for j, v := range l {
				vs[j] = unq(v)
			}
			kv = append(kv, unq(k)+"=["+strings.Join(vs, " ")+"]")
		}
		slices.Sort(kv)
		line("initial list", kv)
	}
	// List prefixes, with their holder: a member, or the initial node
	// (evict_list.go, listsToInitial).
	var prefixes []string
	for k, p := range o.ev.ListPrefix {
		holder := "initial"
		if g, ok := o.ev.LiveOf[k]; ok {
			holder = s.ids[g]
		}
		vs := make([]string, len(p))
		for j, v := range p {
			vs[j] = unq(v)
		}
		prefixes = append(prefixes, unq(k)+"=["+strings.Join(vs, " ")+"] held by "+holder)
	}
	if len(prefixes) > 0 {
		slices.Sort(prefixes)
		line("prefix", prefixes)
	}
	var kept []string
	for _, k := range o.ev.Kept {
		kept = append(kept, o.log.at(k[0]).ID+"<"+o.log.at(k[1]).ID)
	}
	if len(kept) > 0 {
		line("kept", kept)
	}
	var by []string
	for _, why := range PinReasons() {
		if n := o.ev.pinnedBy[why]; n > 0 {
			by = append(by, fmt.Sprintf("%s %d", why, n))
		}
	}
	if len(by) > 0 {
		fmt.Fprintf(b, "pinned by: %s\n", strings.Join(by, ", "))
	}
	if o.ev.Disagreements > 0 {
		fmt.Fprintf(b, "disagreements: %d\n", o.ev.Disagreements)
	}
	for _, id := range window {
		if why, ok := pins[id]; ok {
			fmt.Fprintf(b, "  %s stays: %s\n", id, why)
		}
	}
}

// unq is a key or value as the compact notation writes it.
func unq(v history.Value) string {
	return strings.Trim(string(v), `"`)
}
