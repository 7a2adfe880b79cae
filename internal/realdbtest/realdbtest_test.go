package realdbtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Under CI=true an absent server must fail the test, never skip it. The
// verdict is read from a child test process, since Fatal and Skip end the
// test that calls them.
func TestUnreachableFailsUnderCI(t *testing.T) {
	if os.Getenv("REALDBTEST_CHILD") == "1" {
		Unreachable(t, "pgx", errors.New("connection refused"))
		return
	}
	for _, tc := range []struct {
		ci       string
		wantFail bool
		wantLine string
	}{
		{ci: "true", wantFail: true, wantLine: "pgx required under CI=true: connection refused"},
		{ci: "", wantFail: false, wantLine: "pgx not reachable, skipping: connection refused"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnreachableFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "REALDBTEST_CHILD=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q: failed %v, want %v; output:\n%s", tc.ci, failed, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.wantLine) {
			t.Errorf("CI=%q: output lacks %q:\n%s", tc.ci, tc.wantLine, out)
		}
	}
}

func TestOpenPostgres(t *testing.T) {
	db := Open(t, "pgx", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %d, %v", one, err)
	}
}
