package alertfixture

import (
	"os/exec"
	"strings"
	"testing"
)

func TestLostUpdate_IsTheLostUpdateUnderTheGivenID(t *testing.T) {
	a := LostUpdate(t, "x/1")
	if a.ID != "x/1" {
		t.Errorf("id %q, want x/1", a.ID)
	}
	if a.Type != "lost-update" || len(a.Txns) == 0 {
		t.Errorf("type %q with %d transactions, want a lost update with its transactions", a.Type, len(a.Txns))
	}
}

// A non-test import would put t.Fatal and file reads into a binary.
func TestOnlyTestsImport(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of the module")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	const self = "github.com/streamcheck/streamcheck/internal/alertfixture"
	out, err := exec.Command(goTool, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/streamcheck/streamcheck/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if imp == self {
				t.Errorf("%s imports %s outside its tests", fields[0], self)
			}
		}
	}
}
