package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// jepsenModels are consistency models Jepsen/Elle name that streamcheck
// does not check (yet): none may appear where a level is named, so that no
// help text or README line offers a level that is then refused. The
// registry (history.Levels) is the one place the supported names come
// from; this list only catches the old names coming back.
var jepsenModels = []string{
	"parallel-snapshot-isolation", "repeatable-read", "read-committed", "read-uncommitted",
	"cursor-stability", "update-serializable", "monotonic-atomic-view", "consistent-view",
	"forward-consistent-view", "linearizable", "strong-serializable",
}

// allModels is jepsenModels plus every level of history's lattice that
// is not checked yet and Elle's other names for the lattice's levels: the
// lattice is where the levels to come are named.
func allModels() []string {
	out := slices.Clone(jepsenModels)
	nodes, _ := history.Lattice()
	for _, n := range nodes {
		if slices.Contains(commonWords, n.Name) {
			continue
		}
		if !n.Checked && !slices.Contains(out, n.Name) {
			out = append(out, n.Name)
		}
		for _, a := range n.ElleAliases {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// commonWords are lattice names that are also plain words in help texts
// (Elle's "prefix", Cerone's prefix consistency): no scan looks for them.
var commonWords = []string{"prefix"}

var levelArg = regexp.MustCompile(`(?:--level[ =]|level: )([a-z0-9+-]+)`) // pl-2+ has a digit and a plus

// TestLevelNamesAgree: README, every command's help, config.example.yaml
// and the --level error name exactly the levels of history's registry
// (issue 20, acceptance 5).
func TestLevelNamesAgree(t *testing.T) {
	names := history.LevelNames()
	for i, l := range history.Levels() {
		if l.Name != names[i] || l.Level.String() != l.Name || l.Meaning == "" {
			t.Errorf("registry entry %d: %+v (String %q)", i, l, l.Level)
		}
		if got, err := history.ParseLevel(l.Name); err != nil || got != l.Level {
			t.Errorf("ParseLevel(%q) = %v, %v", l.Name, got, err)
		}
	}
	models := allModels()
	for _, m := range models {
		if slices.Contains(names, m) {
			continue // supported since: drop it from jepsenModels
		}
		if got, err := history.ParseLevel(m); err == nil && !slices.Contains(got.Def().Aliases, m) { // an alias is held
			t.Errorf("ParseLevel(%q) accepts a level the registry does not hold", m)
		}
	}

	// Every --level NAME written anywhere a user reads must parse.
	checkArgs := func(where, text string) {
		t.Helper()
		for _, m := range levelArg.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(names, m[1]) {
				t.Errorf("%s: %q names level %q, which the registry does not hold", where, m[0], m[1])
			}
		}
	}
	// noOtherModels: no unsupported Jepsen model appears at all, except on
	// the lines given (canary's --isolation asks the database for its own
	// levels, which are not checked levels).
	noOtherModels := func(where, text string, except ...string) {
		t.Helper()
	line:
		for _, ln := range strings.Split(text, "\n") {
			for _, e := range except {
				if strings.Contains(ln, e) {
					continue line
				}
			}
			for _, m := range models {
				if regexp.MustCompile(`(^|[^a-z-])`+m+`($|[^a-z-])`).MatchString(ln) && !slices.Contains(names, m) {
					t.Errorf("%s: names unsupported level %q: %q", where, m, ln)
				}
			}
		}
	}

	// README: the Levels table is the registry, row for row.
	readme := readFile(t, "../../README.md")
	var want strings.Builder
	want.WriteString("| level | meaning |\n|---|---|\n")
	for _, l := range history.Levels() {
		want.WriteString("| `" + l.Name + "` | " + l.Meaning + " |\n")
	}
	sec := readme[strings.Index(readme, "\n### Levels\n"):]
	sec = sec[:strings.Index(sec[1:], "\n#")+1]
	if !strings.Contains(sec, want.String()) {
		t.Errorf("README's Levels section does not hold the registry's table; want:\n%s", want.String())
	}
	checkArgs("README.md", readme)
	noOtherModels("README.md", readme, "innodb-snapshot-isolation", "--isolation")
	checkArgs("config.example.yaml", readFile(t, "../../config.example.yaml"))

	// Every command's help: its --level line lists exactly the registry.
	listed := regexp.MustCompile(`(?m)^  -level .*\n\s+.*?: ([a-z0-9+-]+(?:, [a-z0-9+-]+)*)`)
	for _, c := range commands() {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{"help", c.name}, nil, &out, &errb); code != 0 {
			t.Fatalf("help %s: exit %d: %s", c.name, code, errb.String())
		}
		help := out.String()
		checkArgs("help "+c.name, help)
		noOtherModels("help "+c.name, help, "requested from the database", "innodb")
		if !strings.Contains(help, "-level ") {
			continue
		}
		// run and the canary check online and list the online levels
		// (LevelInfo.Online); the others list the whole registry.
		want := names
		if c.name == "run" || c.name == "canary" || c.name == "demo" {
			want = history.OnlineLevelNames()
		}
		m := listed.FindStringSubmatch(help)
		if m == nil || strings.Join(want, ", ") != m[1] {
			t.Errorf("help %s: the -level flag lists %q, want %q", c.name, m, strings.Join(want, ", "))
		}
	}
	var out bytes.Buffer
	run(context.Background(), []string{"help", "check"}, nil, &out, &out)
	if !strings.Contains(out.String(), history.LevelTable("\nLevels:\n", "  ")) {
		t.Errorf("help check does not print the registry's level table")
	}

	// The error for a level outside the registry lists the registry.
	for _, args := range [][]string{
		{"check", "--level", "linearizable", "example:valid"},
		{"run", "--level", "linearizable"},
		{"canary", "--dsn", "postgres://u@127.0.0.1/db", "--level", "linearizable"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), "streamcheck checks "+strings.Join(names, ", ")+")") {
			t.Errorf("%q: stderr %q does not list the registry", args, errb.String())
		}
	}

	// The project's semantics document, once it is in the repository,
	// names every level.
	if b, err := os.ReadFile("../../docs/SEMANTICS.md"); err == nil {
		for _, n := range names {
			if !strings.Contains(string(b), n) {
				t.Errorf("docs/SEMANTICS.md does not name level %q", n)
			}
		}
		checkArgs("docs/SEMANTICS.md", string(b))
	}
}

// sourceExceptions are the string literals of commands that may name a
// level without the registry: the levels canary asks the database for
// (SQL's names, not checked levels) and MariaDB's own variable.
var sourceExceptions = []string{
	"isolation level requested from the database",
	"innodb-snapshot-isolation",
	"innodb_snapshot_isolation",
}

// TestLevelNamesFromRegistry: no string literal in a command (cmd/,
// internal/), its help or the oracle names a level, checked or not, by
// hand: the name must come from the registry (history.Levels, a Level's
// String) or, for the levels to come, from the lattice. Tests and
// testdata are exempt (they are the expectations).
func TestLevelNamesFromRegistry(t *testing.T) {
	var words []string
	nodes, _ := history.Lattice()
	for _, n := range nodes {
		if !slices.Contains(commonWords, n.Name) {
			words = append(words, n.Name)
		}
		words = append(words, n.ElleAliases...)
	}
	words = append(words, jepsenModels...)
	pat := make([]*regexp.Regexp, len(words))
	for i, w := range words {
		pat[i] = regexp.MustCompile(`(^|[^a-zA-Z_-])` + regexp.QuoteMeta(w) + `($|[^a-zA-Z_-])`)
	}
	fset := token.NewFileSet()
	for _, root := range []string{"../../cmd", "../../internal"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			lines := strings.Split(string(src), "\n")
			f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				// An exception covers its literal's whole source line (a
				// flag's default sits beside its usage text).
				line := lines[fset.Position(lit.Pos()).Line-1]
				for _, e := range sourceExceptions {
					if strings.Contains(line, e) {
						return true
					}
				}
				for i, p := range pat {
					if p.MatchString(s) {
						t.Errorf("%s: the literal %q names level %q; take it from history's registry", fset.Position(lit.Pos()), s, words[i])
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
