// Package alertfixture gives tests of the alert consumers (alerts,
// internal/statuspage) one real alert to deliver and show, loaded from
// JSON rather than recomputed, so that those tests do not depend on the
// checker building. Only tests may import it (TestOnlyTestsImport holds
// the line): it calls t.Fatal and finds the repository from the working
// directory go test gives a test, its package's.
package alertfixture

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/internal/report"
)

// fixturePath is the alert's file, from the module's root.
const fixturePath = "alerts/testdata/lost-update.alert.json"

// LostUpdate returns the stored alert under the given id. It is the
// checker's own anomaly for a lost update (A and B both read W's x and
// both overwrite it: W[0,100] w x 1 / A[110,200] r x 1, w x 2 /
// B[120,210] r x 1, w x 3, strict-serializable), as incremental.Check and
// report.New gave it.
func LostUpdate(t testing.TB, id string) report.Alert {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, fixturePath))
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

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("alertfixture: no go.mod at or above the working directory")
		}
		dir = parent
	}
}
