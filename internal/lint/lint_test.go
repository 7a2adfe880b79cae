// Package lint holds tests over the repository's source that keep its
// architecture: the algorithm packages do no IO (pebble's
// internal/lint/lint_test.go, TestForbiddenImports, is the model).
package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// algorithmPackages are the pure state machines: events in, verdicts,
// alerts and state to persist out. The commands (internal/...), ingest/,
// state/ and alerts/ own the disk, the network and the clock.
var algorithmPackages = []string{"driver", "online", "window", "solver", "closure", "incremental", "saturation", "stampcheck", "weakonline", "sionline", "stamponline"}

// forbidden are the imports that reach the operating system: files,
// sockets, processes, system calls.
var forbidden = map[string]bool{
	"os": true, "os/exec": true, "os/signal": true,
	"net": true, "net/http": true,
	"syscall": true, "golang.org/x/sys/unix": true,
}

// forbiddenInDriver are the IO packages of this module and the metrics
// library, which the driver's caller owns (driver/doc.go). The engine
// (online/) may not import them either: it receives its body file as an
// interface (online.BodyFile; state.FileBodies is the one on disk).
var forbiddenInDriver = []string{
	"github.com/streamcheck/streamcheck/ingest",
	"github.com/streamcheck/streamcheck/state",
	"github.com/streamcheck/streamcheck/alerts",
	"github.com/prometheus/",
}

// knownExceptions are files allowed one forbidden import, each with the
// issue that removes it. None is left: the body file that incremental
// (later online) wrote itself moved to state/ (issue 21).
var knownExceptions = map[string]map[string]bool{}

// TestForbiddenImports fails if a non-test file of an algorithm package
// (or a package below it), under any build tag, imports os, net or
// syscall. It parses the files rather than asking go list so that files
// of every GOOS are read.
func TestForbiddenImports(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := 0
	for _, pkg := range algorithmPackages {
		dir := filepath.Join(root, pkg)
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			seen++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if forbidden[p] && !knownExceptions[rel][p] {
					t.Errorf("%s imports %q: an algorithm package does no IO (the caller passes what it needs)", rel, p)
				}
				if pkg == "driver" || pkg == "online" || pkg == "weakonline" {
					for _, f := range forbiddenInDriver {
						if p == f || strings.HasPrefix(p, f) {
							t.Errorf("%s imports %q: the caller of the driver and the engine owns sources, state, sinks and metrics", rel, p)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("no source files found: the test is not looking at the repository")
	}
}
