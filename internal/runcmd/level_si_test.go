package runcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/sionline"
)

// TestRunSnapshotLevels: every level of the snapshot-isolation family is
// checked online (issue 28), and run says at start what it checks: the
// level itself where it orders by real time, strong snapshot isolation
// with the promise named where it does not, and which levels' windows
// evict (all but generalized SI's, which keeps every transaction).
func TestRunSnapshotLevels(t *testing.T) {
	n := 0
	for _, d := range history.Levels() {
		if !d.Level.BeginCommit() {
			continue
		}
		n++
		if !d.Online {
			t.Errorf("%s is not marked online; sionline checks it", d.Name)
		}
		in := `{"id":"t1","session":"s","start":1,"end":2,"status":"committed","ops":[["w","x",1]]}` + "\n" +
			`{"id":"t2","session":"s","start":3,"end":4,"status":"committed","ops":[["r","x",1]]}` + "\n"
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"--level", d.Name, "--http=", "--status", "0", "--initial-state", "empty"}, strings.NewReader(in), &out, &errb)
		if code != ExitOK {
			t.Errorf("run --level %s: exit %d, want 0 (stderr %q)", d.Name, code, errb.String())
		}
		checked := sionline.Checked(d.Level)
		if !d.Level.RealTime() && checked != history.StrongSnapshotIsolation {
			t.Errorf("%s is checked as %s, want strong-snapshot-isolation", d.Name, checked)
		}
		for _, want := range []string{"level " + sionline.CheckedAs(d.Level), sionline.MemoryNote(d.Level)} {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("run --level %s: stderr %q, want %q", d.Name, errb.String(), want)
			}
		}
		if (checked != d.Level) != strings.Contains(errb.String(), "needs_realtime=true") {
			t.Errorf("run --level %s: the needs_realtime statement is wrong in %q", d.Name, errb.String())
		}
		if sionline.Bounded(d.Level) == strings.Contains(errb.String(), "window keeps every released transaction") {
			t.Errorf("run --level %s: the memory statement contradicts Bounded=%v in %q", d.Name, sionline.Bounded(d.Level), errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("run --level %s wrote %q", d.Name, out.String())
		}
	}
	if n != 4 {
		t.Errorf("%d levels of the snapshot-isolation family in the registry, want 4", n)
	}
}
