package statuspage

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
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

// lostUpdateAlert is the checker's own alert for a lost update: A and B
// both read W's x and both overwrite it.
func lostUpdateAlert(t testing.TB, id string) report.Alert {
	t.Helper()
	h, err := history.ParseCompact(`
W[0,100] w x 1
A[110,200] r x 1, w x 2
B[120,210] r x 1, w x 3
`)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r := report.New(res, h)
	if len(r.Anomalies) != 1 {
		t.Fatalf("want one anomaly, got %+v", r)
	}
	return report.Alert{ID: id, Level: r.Level, PromisedLevel: "serializable", SkewNS: r.SkewNS,
		InitialState: r.InitialState, Watermark: 120, Anomaly: r.Anomalies[0]}
}
