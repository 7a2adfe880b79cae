package checkcmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/internal/report"
)

// TestFactsEndToEnd runs check on native histories with commit stamps:
// the facts' witness settles a valid history; a history valid at the
// level whose stamps contradict a read is reported in its own class with
// its minimal set and exits 1; an anomaly stays an anomaly of the level,
// whatever the stamps (docs/SEMANTICS.md §10).
func TestFactsEndToEnd(t *testing.T) {
	for _, c := range []struct {
		name, in string
		code     int
		want     []string
		incons   []string
	}{
		{"witness", `{"id":"a","status":"committed","commit_ts":1,"ops":[["w","x",1]]}
{"id":"b","status":"committed","commit_ts":2,"ops":[["r","x",1],["w","x",2]]}
{"id":"c","status":"committed","commit_ts":3,"ops":[["r","x",2]]}
`, ExitValid, []string{"VALID", "their witness"}, nil},
		// b read x=1 from a, so a < b in every serial order; the stamps
		// claim b committed first. Serializable (a b c), but not with the
		// stamps; c takes no part.
		{"inconsistent", `{"id":"a","status":"committed","commit_ts":5,"ops":[["w","x",1]]}
{"id":"b","status":"committed","commit_ts":2,"ops":[["r","x",1]]}
{"id":"c","status":"committed","commit_ts":9,"ops":[["w","y",1]]}
`, ExitAnomaly, []string{"VALID", "STAMPS INCONSISTENT WITH READS", "set: a, b", "commit_ts=5"}, []string{"a", "b"}},
		// A lost update: invalid whatever the stamps say.
		{"anomaly", `{"id":"a","status":"committed","commit_ts":1,"ops":[["r","x",null],["w","x",1]]}
{"id":"b","status":"committed","commit_ts":2,"ops":[["r","x",null],["w","x",2]]}
`, ExitAnomaly, []string{"INVALID"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main([]string{"-"}, nil, strings.NewReader(c.in), &out, &errb)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out.String(), errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			out.Reset()
			Main([]string{"--format", "json", "-"}, nil, strings.NewReader(c.in), &out, &errb)
			var rep report.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Facts == nil {
				t.Fatalf("no facts section:\n%s", out.String())
			}
			var got []string
			if rep.Facts.Inconsistent != nil {
				got = rep.Facts.Inconsistent.Core
			}
			if strings.Join(got, ",") != strings.Join(c.incons, ",") {
				t.Errorf("inconsistent set %v, want %v", got, c.incons)
			}
		})
	}
}
