package alerts

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/streamcheck/streamcheck/internal/report"
)

// lostUpdateAlert is a real alert under the given id: the checker's own
// anomaly for a lost update (A and B both read W's x and both overwrite
// it: W[0,100] w x 1 / A[110,200] r x 1, w x 2 / B[120,210] r x 1, w x 3,
// strict-serializable), as incremental.Check and report.New gave it. It is
// kept as JSON rather than recomputed so that these tests do not depend on
// the checker building.
func lostUpdateAlert(t testing.TB, id string) report.Alert {
	t.Helper()
	b, err := os.ReadFile("testdata/lost-update.alert.json")
	if err != nil {
		t.Fatal(err)
	}
	var a report.Alert
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	a.ID = id
	return a
}
