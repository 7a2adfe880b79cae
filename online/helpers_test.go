package online

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/state"
)

// tinyCount is the number of tiny random histories a test runs: def, or
// $STREAMCHECK_TINY (as in package incremental's tests).
func tinyCount(def int) int {
	if s := os.Getenv("STREAMCHECK_TINY"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return def
}

// dump lists h's transactions, one a line, for a failure message.
func dump(h *history.History) string {
	s := ""
	for i := range h.Txns {
		s += "  " + h.Txns[i].Compact() + "\n"
	}
	return s
}

// durableCheckpoint takes o's durable snapshot and syncs it, copies o's
// body file at live to copyPath with tail after it (what a crash after
// the checkpoint leaves: more records, a torn one), and restores an
// engine from the copy. It returns that engine, the snapshot and the
// body file as the checkpoint left it.
func durableCheckpoint(t *testing.T, o *Online, opts history.Options, live, copyPath string, tail []byte) (back *Online, snap, file []byte) {
	t.Helper()
	snap, sync, err := o.SnapshotDurable()
	if err != nil {
		t.Fatal(err)
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if file, err = os.ReadFile(live); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, append(slices.Clip(file), tail...), 0o600); err != nil {
		t.Fatal(err)
	}
	if back, err = RestoreOnlineAt(opts, state.NewFileBodies(copyPath), snap, nil); err != nil {
		t.Fatalf("restore from %s: %v", copyPath, err)
	}
	return back, snap, file
}

// restoredFromBodies is o restored from a snapshot that hands its bodies
// over.
func restoredFromBodies(t *testing.T, o *Online) *Online {
	t.Helper()
	snap, bodies, err := o.SnapshotBodies(0)
	if err != nil {
		t.Fatal(err)
	}
	back, err := RestoreOnlineBodies(o.opts, snap, bodies)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// sameSnapshot fails unless back snapshots as o does.
func sameSnapshot(t *testing.T, o, back *Online) {
	t.Helper()
	want, _ := o.Snapshot()
	if got, _ := back.Snapshot(); !bytes.Equal(got, want) {
		t.Fatal("restored engine differs")
	}
}
