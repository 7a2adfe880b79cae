package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
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
	"snapshot-isolation", "strong-snapshot-isolation", "strong-session-snapshot-isolation",
	"parallel-snapshot-isolation", "repeatable-read", "read-committed", "read-uncommitted",
	"cursor-stability", "update-serializable", "monotonic-atomic-view", "consistent-view",
	"forward-consistent-view", "linearizable", "strong-serializable",
}

var levelArg = regexp.MustCompile(`(?:--level[ =]|level: )([a-z-]+)`)

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
	for _, m := range jepsenModels {
		if slices.Contains(names, m) {
			continue // supported since: drop it from jepsenModels
		}
		if _, err := history.ParseLevel(m); err == nil {
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
			for _, m := range jepsenModels {
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
	listed := regexp.MustCompile(`(?m)^  -level .*\n\s+.*?: ([a-z-]+(?:, [a-z-]+)*)`)
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
		m := listed.FindStringSubmatch(help)
		if m == nil || strings.Join(names, ", ") != m[1] {
			t.Errorf("help %s: the -level flag lists %q, want %q", c.name, m, strings.Join(names, ", "))
		}
	}
	var out bytes.Buffer
	run(context.Background(), []string{"help", "check"}, nil, &out, &out)
	if !strings.Contains(out.String(), history.LevelTable("\nLevels:\n", "  ")) {
		t.Errorf("help check does not print the registry's level table")
	}

	// The error for a level outside the registry lists the registry.
	for _, args := range [][]string{
		{"check", "--level", "snapshot-isolation", "example:valid"},
		{"run", "--level", "snapshot-isolation"},
		{"canary", "--dsn", "postgres://u@127.0.0.1/db", "--level", "snapshot-isolation"},
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

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
