package runcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestRunRefusesSnapshotLevels: run checks with real time and a
// serializable engine, so a write skew that snapshot isolation allows
// would be a false alarm; every level of the family (Online false) is
// refused with exit 2 and a message that sends the user to check, before
// anything is read.
func TestRunRefusesSnapshotLevels(t *testing.T) {
	n := 0
	for _, d := range history.Levels() {
		if !d.Level.BeginCommit() {
			continue
		}
		n++
		if d.Online {
			t.Errorf("%s is marked online; run has no snapshot engine (issue 28)", d.Name)
		}
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"--level", d.Name, "--http=", "--status", "0"}, strings.NewReader(""), &out, &errb)
		if code != 2 {
			t.Errorf("run --level %s: exit %d, want 2 (stderr %q)", d.Name, code, errb.String())
		}
		want := d.Name + " is checked offline only (streamcheck check); run checks " + strings.Join(history.OnlineLevelNames(), ", ")
		if !strings.Contains(errb.String(), want) {
			t.Errorf("run --level %s: stderr %q, want %q", d.Name, errb.String(), want)
		}
		if out.Len() != 0 {
			t.Errorf("run --level %s wrote %q", d.Name, out.String())
		}
	}
	if n != 4 {
		t.Errorf("%d levels of the snapshot-isolation family in the registry, want 4", n)
	}
}
