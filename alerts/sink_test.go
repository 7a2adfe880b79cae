package alerts

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/internal/report"
)

// TestJSONLinesFile: alerts append to the file one per line (an existing
// file is kept), each line decodes back to the alert, and a closed sink
// refuses deliveries instead of losing them silently.
func TestJSONLinesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	if err := os.WriteFile(path, []byte("{\"id\":\"older\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenJSONLinesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "file:"+path {
		t.Errorf("name %q", s.Name())
	}
	a, b := lostUpdateAlert(t, "f1"), lostUpdateAlert(t, "f2")
	for _, x := range []report.Alert{a, b} {
		if err := s.Deliver(context.Background(), x); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Deliver(context.Background(), a); err == nil {
		t.Error("a closed sink accepted an alert")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var got []report.Alert
	for sc.Scan() {
		var x report.Alert
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, x)
	}
	if len(got) != 3 || got[0].ID != "older" || !reflect.DeepEqual(got[1], a) || !reflect.DeepEqual(got[2], b) {
		t.Errorf("file holds %d alerts: %+v", len(got), got)
	}
	if _, err := OpenJSONLinesFile(filepath.Join(path, "not-a-dir", "x")); err == nil {
		t.Error("opened a file under a regular file")
	}
}
