package main

import (
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-11-26T13:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	if got, want := versionLine(bi, true), "streamcheck v1.2.3 0123456789ab+dirty 2026-11-26T13:00:00Z go1.26.8"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.8"}
	if got, want := versionLine(bi, true), "streamcheck (devel) go1.26.8"; got != want {
		t.Errorf("versionLine without VCS = %q, want %q", got, want)
	}
	if got := versionLine(nil, false); !strings.HasPrefix(got, "streamcheck (no build information) go") {
		t.Errorf("versionLine without build info = %q", got)
	}
}

// README's install commands name this module's path and command
// directory, and the help commands it cites exist.
func TestReadmeInstall(t *testing.T) {
	mod := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(readFile(t, "../../go.mod"))
	if mod == nil {
		t.Fatal("go.mod has no module line")
	}
	readme := readFile(t, "../../README.md")
	for _, want := range []string{
		"go install " + mod[1] + "/cmd/streamcheck@latest",
		"go install ./cmd/streamcheck",
		"streamcheck --version",
		"streamcheck help COMMAND",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if _, err := os.Stat("../../cmd/streamcheck/main.go"); err != nil {
		t.Error(err)
	}
}
