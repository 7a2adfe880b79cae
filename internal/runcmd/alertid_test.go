package runcmd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunReusedIDPair is issue #20 item 2 end to end: two distinct lost
// updates whose cores reuse the same transaction ids (a client whose
// counter restarted), 10 s apart, through `run` on stdin (the defaults
// but a 1 ms lateness and tick, so that the first anomaly is alerted and
// evicted before the second arrives). Both are alerts ("2 alerts" in the
// summary) and both must be delivered: with ids that named only the
// cores' transaction ids, the second had the first's id and was dropped
// as already emitted.
func TestRunReusedIDPair(t *testing.T) {
	var in strings.Builder
	for _, shift := range []int64{0, 10_000_000_000} {
		key := map[int64]string{0: "x", 10_000_000_000: "y"}[shift]
		for _, e := range []struct {
			id         string
			start, end int64
			ops        string
		}{
			{"a", 0, 10, `["w","` + key + `",1]`},
			{"b", 20, 30, `["r","` + key + `",1],["w","` + key + `",2]`},
			{"c", 22, 32, `["r","` + key + `",1],["w","` + key + `",3]`},
			{"d", 60, 70, `["r","` + key + `",3]`},
		} {
			in.WriteString(`{"session":"s-` + e.id + `","id":"` + e.id + `","start":` + itoa(e.start+shift) + `,"end":` + itoa(e.end+shift) +
				`,"status":"committed","ops":[` + e.ops + `]}` + "\n")
		}
	}
	alerts := filepath.Join(t.TempDir(), "alerts")
	code, _, stderr := runMain(t, context.Background(), []string{"--lateness", "1ms", "--tick", "1ms", "--status", "0", "--alerts", alerts}, in.String())
	if code != ExitAnomaly {
		t.Fatalf("exit %d, want %d\n%s", code, ExitAnomaly, stderr)
	}
	b, err := os.ReadFile(alerts)
	if err != nil {
		t.Fatal(err)
	}
	ids, cores := alertIDs(t, string(b))
	if len(ids) != 2 {
		t.Fatalf("%d alert ids delivered, want 2 (cores %v)\n%s", len(ids), cores, stderr)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
