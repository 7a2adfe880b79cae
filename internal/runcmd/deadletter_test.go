package runcmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/config"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/online"
)

// badInput is the repository's bad-input corpus (testdata/badinput).
const badInput = "../../testdata/badinput"

// TestDeadLetterNoFalseAlarm: for every dead-letter reason, a rejected
// event t0 writes x=1, overlapping t1 (x=2); t2, after both, reads x=1
// (a line that is not JSON comes second: a first line names the format).
// With t0's writes the history is valid; with them dropped (the old
// code) t2's read looked stale and fired a G-single-realtime alert. The
// read must be reported unchecked (a partial check), never alerted
// (issue 20 item 1; docs/SEMANTICS.md §5 "Dead letters"). The file name
// says the reason: deadletter-<reason>[-<case>].jsonl.
func TestDeadLetterNoFalseAlarm(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(badInput, "deadletter-*.jsonl"))
	if len(files) < 15 {
		t.Fatalf("%d dead-letter cases in %s", len(files), badInput)
	}
	reasons := []string{"invalid", "undecodable", "oversized", "late", "duplicate-id", "missing-time", "end-before-start", "future"}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "deadletter-"), ".jsonl")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dl := filepath.Join(t.TempDir(), "dead.jsonl")
			var out, errb bytes.Buffer
			Main(context.Background(), []string{"--http=", "--lateness", "50", "--tick", "1", "--dead-letter", dl}, bytes.NewReader(in), &out, &errb)
			if out.Len() > 0 {
				t.Errorf("false alert:\n%s\nstderr: %s", out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), "PARTIAL") {
				t.Errorf("summary does not say the check was partial: %s", errb.String())
			}
			b, _ := os.ReadFile(dl)
			reason := ""
			for _, r := range reasons {
				if strings.HasPrefix(name, r) {
					reason = r
				}
			}
			if reason == "" || !strings.Contains(string(b), `"reason":"`+reason+`"`) {
				t.Errorf("dead letter does not name reason %q:\n%s", reason, b)
			}
		})
	}
}

// TestDeadLetterScope: a dead letter taints only what it may have
// written. An unknown micro-op on y leaves a stale read of z alerted; a
// line cut short inside its ops may have written any key, so the same
// read is unchecked.
func TestDeadLetterScope(t *testing.T) {
	stale := strings.Join([]string{
		`{"id":"w1","start":100,"end":200,"status":"committed","ops":[["w","z",1]]}`,
		`{"id":"w2","start":300,"end":400,"status":"committed","ops":[["w","z",2]]}`,
		`{"id":"r","start":5000,"end":5100,"status":"committed","ops":[["r","z",1]]}`,
	}, "\n") + "\n"
	for _, tc := range []struct {
		name, dead string
		alert      bool
	}{
		{"unknown op on y", `{"id":"d","start":250,"end":450,"status":"committed","ops":[["w","x",1],["incr","y",1]]}`, true},
		{"value beyond int64 on y", `{"id":"d","start":250,"end":450,"status":"committed","ops":[["w","y",18446744073709551616]]}`, true},
		{"cut inside ops", `{"id":"d","start":250,"end":450,"status":"committed","ops":[["w","x",1],["w","y",`, false},
		{"not json", `garbage`, false},
		{"writes z=1 with times it cannot keep", `{"id":"d","start":450,"end":250,"status":"committed","ops":[["w","z",1]]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			// The dead line second: the first line names the format.
			first, rest, _ := strings.Cut(stale, "\n")
			Main(context.Background(), []string{"--http=", "--lateness", "50", "--tick", "1"}, strings.NewReader(first+"\n"+tc.dead+"\n"+rest), &out, &errb)
			if got := strings.Contains(out.String(), `"G-single-realtime"`); got != tc.alert {
				t.Errorf("alerted %v, want %v:\n%s\nstderr: %s", got, tc.alert, out.String(), errb.String())
			}
		})
	}
}

// TestDeadLetterByteExact: a dead letter keeps the bytes it set aside,
// those that are not UTF-8 included (JSON text cannot carry them, so they
// come base64-encoded beside the text); a UTF-8 event is its text.
func TestDeadLetterByteExact(t *testing.T) {
	lines := [][]byte{
		[]byte("{\"id\":\"a\",\"start\":1,\"end\":2,\"status\":\"committed\",\"ops\":[[\"w\",\"k\",\"\xff\xfe\"]]}"),
		[]byte(`{"id":"b","start":3,"end":4,"status":"committed","ops":[["w","k","\ud800"]]}`),
		[]byte("not json \xc3 <&> \u2028 é"),
	}
	dl := filepath.Join(t.TempDir(), "dead.jsonl")
	var out, errb bytes.Buffer
	Main(context.Background(), []string{"--http=", "--lateness", "50", "--tick", "1", "--dead-letter", dl}, bytes.NewReader(append(bytes.Join(lines, []byte("\n")), '\n')), &out, &errb)
	b, err := os.ReadFile(dl)
	if err != nil {
		t.Fatal(err)
	}
	got := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(got) != len(lines) {
		t.Fatalf("%d dead letters, want %d:\n%s", len(got), len(lines), b)
	}
	for i, g := range got {
		var d struct {
			Event       string `json:"event"`
			EventBase64 string `json:"event_base64"`
		}
		if err := json.Unmarshal(g, &d); err != nil {
			t.Fatal(err)
		}
		exact := []byte(d.Event)
		if d.EventBase64 != "" {
			if exact, err = base64.StdEncoding.DecodeString(d.EventBase64); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(exact, lines[i]) {
			t.Errorf("dead letter %d holds %q, the event was %q", i, exact, lines[i])
		}
	}
}

// TestRecoverBounded: a dead letter's body stays in the engine for the
// rest of the run, so what it keeps is bounded: beyond maxUncheckedOps
// ops its keys stand for its writes (each a wildcard), and beyond that
// many keys it may have written any key. An oversized message is read
// the same way.
func TestRecoverBounded(t *testing.T) {
	r := &runner{cfg: &runConfig{Config: config.Default()}}
	event := func(keys, ops int) []byte {
		b := []byte(`{"id":"big","start":1,"end":2,"status":"committed","ops":[`)
		for i := range ops {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `["w","k%d",%d]`, i%keys, i)
		}
		return append(b, "]}"...)
	}
	wilds := func(tx history.Txn) (n int, all bool) {
		for _, op := range tx.Ops {
			if op.Value == online.Wild {
				n++
				all = all || op.Key == online.Wild
			}
		}
		return n, all
	}
	for _, tc := range []struct {
		keys, ops, exact, wild int
		all                    bool
	}{
		{keys: 3, ops: 10, exact: 10},
		{keys: 10, ops: 2 * maxUncheckedOps, wild: 10},
		{keys: 2 * maxUncheckedOps, ops: 2 * maxUncheckedOps, wild: 1, all: true},
	} {
		m := &message{value: event(tc.keys, tc.ops), oversized: true}
		tx := r.recover(m)
		n, all := wilds(tx)
		if len(tx.Ops)-n != tc.exact || n != tc.wild || all != tc.all {
			t.Errorf("%d ops on %d keys: %d exact, %d wildcards (all %v); want %d, %d (%v)", tc.ops, tc.keys, len(tx.Ops)-n, n, all, tc.exact, tc.wild, tc.all)
		}
	}
}

// TestDeadLetterCoresAreCores: generated streams with injected anomalies,
// some of whose events are damaged so that run sets them aside (times
// swapped or removed, a string that is not UTF-8 in a field of its own, a
// write of a value beyond int64 to a key of its own, the line cut short).
// The damage changes no transaction's content, so the undamaged history is
// what the database did: every alert's core must violate the level in it,
// under the projection that leaves the set-aside transactions out (§3).
// Dropping a set-aside event's writes (the old code) makes cores that do
// not (issue 20 item 1).
func TestDeadLetterCoresAreCores(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level, opts.InDoubt = history.StrictSerializable, 1e6
	alerts := 0
	for seed := range uint64(4) {
		cfg, _ := gen.Preset("mixed")
		cfg.Txns, cfg.Seed = 1200, 100+seed
		cfg.Inject = []string{"lost-update", "G-single-realtime", "write-skew", "G1c", "read-skew"}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		var in []byte
		damaged := 0
		for i := range h.Txns {
			line := ingest.AppendNative(nil, &h.Txns[i])
			if rng.IntN(30) == 0 && h.Txns[i].Writes() {
				damaged++
				s := string(line)
				tx := h.Txns[i]
				switch k := rng.IntN(5); {
				case k == 0: // end before start
					s = strings.Replace(s, fmt.Sprintf(`"start":%d,"end":%d`, tx.Start, tx.End), fmt.Sprintf(`"start":%d,"end":%d`, tx.End, tx.Start-1), 1)
				case k == 1: // no times
					s = strings.Replace(s, fmt.Sprintf(`"start":%d,"end":%d,`, tx.Start, tx.End), "", 1)
				case k == 2:
					s = strings.Replace(s, `{`, "{\"note\":\"\xff\",", 1)
				case k == 3:
					s = strings.Replace(s, `"ops":[`, fmt.Sprintf(`"ops":[["w","fresh-%d",9223372036854775808],`, i), 1)
				case i > len(h.Txns)*9/10: // cut short, late in the stream only: it drops every later read
					s = s[:len(s)-5]
				default:
					damaged--
				}
				line = []byte(s)
			}
			in = append(append(in, line...), '\n')
		}
		var out, errb bytes.Buffer
		Main(context.Background(), []string{"--http=", "--lateness", "5ms", "--indoubt", "1ms", "--initial-state", "empty", "--tick", "1ms"}, bytes.NewReader(in), &out, &errb)
		if damaged > 0 && !strings.Contains(errb.String(), "PARTIAL") {
			t.Errorf("seed %d: %d events damaged, the summary does not say partial: %s", seed, damaged, errb.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if l == "" {
				continue
			}
			var a report.Alert
			if err := json.Unmarshal([]byte(l), &a); err != nil {
				t.Fatalf("alert line %q: %v", l, err)
			}
			alerts++
			r, err := incremental.Check(context.Background(), incremental.Project(h, opts, a.Core), opts, incremental.Config{})
			if err != nil || r.Verdict != incremental.Invalid {
				t.Errorf("seed %d: alert %s core %v does not violate in the undamaged history: %v %v", seed, a.Type, a.Core, r.Verdict, err)
			}
		}
	}
	if alerts < 10 {
		t.Errorf("only %d alerts over the streams: the test lost its point", alerts)
	}
}
