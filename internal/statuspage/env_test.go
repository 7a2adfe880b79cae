package statuspage

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"testing"

	"github.com/streamcheck/streamcheck/internal/report"
)

// needBinary returns the path of an external program, skipping the test
// when it is missing, except under CI=true where .ci/run installs it.
func needBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (Debian package %s) is required under CI=true", name, pkg)
		}
		t.Skipf("%s not installed (apt-get install --no-install-recommends %s)", name, pkg)
	}
	return p
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lostUpdateAlert is a real alert under the given id: the checker's own
// anomaly for a lost update (A and B both read W's x and both overwrite
// it: W[0,100] w x 1 / A[110,200] r x 1, w x 2 / B[120,210] r x 1, w x 3,
// strict-serializable), as incremental.Check and report.New gave it. It is
// kept as JSON rather than recomputed so that these tests do not depend on
// the checker building.
func lostUpdateAlert(t testing.TB, id string) report.Alert {
	t.Helper()
	b, err := os.ReadFile("../../alerts/testdata/lost-update.alert.json")
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
