package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoInternalImports holds the line of verdict's V2: the public alerts
// package (and everything it imports) uses no internal/ package, so a Sink
// can be written outside the module and does not depend on the checker.
func TestNoInternalImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/streamcheck/streamcheck/") && strings.Contains(p, "/internal/") {
			t.Errorf("alerts imports %s: sinks must depend only on public packages (verdict)", p)
		}
	}
}

// TestExampleSinkBuilds compiles examples/sink, a module of its own, in a
// temporary copy whose replace directive points at this checkout: a sink
// outside the module compiles against the public types alone.
func TestExampleSinkBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"sink.go", "go.mod"} {
		b, err := os.ReadFile(filepath.Join(root, "examples", "sink", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			b = []byte(strings.Replace(string(b), "=> ../..", "=> "+root, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The module's checksums are the root's: the example needs a subset.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("examples/sink does not compile against the public types: %v\n%s", err, out)
	}
}
