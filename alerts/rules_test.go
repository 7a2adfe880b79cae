package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamcheck/streamcheck/alerts/alertstest"
)

const deployDir = "../deploy/prometheus"

// touchAll gives every metric a value, so that vectors have a series and
// the gathered output shows each metric.
func touchAll(m *Metrics) {
	m.EventsConsumed.Add(10)
	m.EventsDecoded.Add(9)
	m.Reject(ReasonLate)
	m.TxnsChecked.Add(9)
	m.WindowTxns.Set(5)
	m.PinnedTxns.Set(1)
	m.PinnedByReason.WithLabelValues("r3-open-neighbour").Set(1)
	m.EvictedTxns.Add(3)
	m.ConstraintsCreated.Add(4)
	m.ConstraintsPruned.Add(2)
	m.ObserveSolve(1500000, 7)
	m.SetWatermarkLag("0", 2000000000)
	m.AllowedLateness.Set(30)
	m.ObserveCheckpoint(3000000, 4096, 1<<20)
	m.Anomaly("lost-update")
	m.SetInexact(true)
	m.AlertsEnqueued.Inc()
	m.initSink("webhook")
	m.SinkLastSuccess.WithLabelValues("webhook").Set(1.7e9)
	m.AlertLatency.WithLabelValues("webhook").Observe(0.2)
	m.OutboxErrors.Add(0)
}

// TestRulesWithPromtool: `promtool check rules` accepts rules.yml, its
// unit tests (rules_test.yml) pass, the example Prometheus and
// Alertmanager configurations are valid, and every streamcheck_ metric
// the rules name exists in Metrics (a renamed metric would silently
// disable a rule).
func TestRulesWithPromtool(t *testing.T) {
	promtool := alertstest.NeedBinary(t, "promtool", "prometheus")
	run := func(dir string, bin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run(deployDir, promtool, "check", "rules", "rules.yml")
	if !strings.Contains(out, "SUCCESS") || strings.Contains(strings.ToLower(out), "warn") {
		t.Errorf("promtool check rules:\n%s", out)
	}
	run(deployDir, promtool, "test", "rules", "rules_test.yml")
	run(deployDir, promtool, "check", "config", "prometheus.example.yml")
	if amtool, err := exec.LookPath("amtool"); err == nil {
		run(deployDir, amtool, "check-config", "alertmanager.example.yml")
	} else if os.Getenv("CI") == "true" {
		t.Error("amtool (Debian package prometheus-alertmanager) is required under CI=true")
	}

	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	touchAll(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, mf := range mfs {
		have = append(have, mf.GetName())
	}
	rules, err := os.ReadFile(filepath.Join(deployDir, "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	used := regexp.MustCompile(`\bstreamcheck_[a-z_]+`).FindAllString(string(rules), -1)
	if len(used) < 6 {
		t.Fatalf("rules name only %v", used)
	}
	for _, name := range used {
		if !slices.Contains(have, name) {
			t.Errorf("rules.yml uses %s, which Metrics does not export (have %v)", name, have)
		}
	}
}

// TestMetricNames: every metric has the streamcheck_ prefix and help,
// counters end in _total, and nothing but NewMetrics' own collectors
// reach the registry.
func TestMetricNames(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	touchAll(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != len(m.collectors()) {
		t.Errorf("%d families gathered, %d collectors", len(mfs), len(m.collectors()))
	}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "streamcheck_") || mf.GetHelp() == "" {
			t.Errorf("%s: prefix or help missing", name)
		}
		if (mf.GetType().String() == "COUNTER") != strings.HasSuffix(name, "_total") {
			t.Errorf("%s: a %s", name, mf.GetType())
		}
	}
	// A nil registerer registers nothing and still counts.
	m2 := NewMetrics(nil)
	m2.TxnsChecked.Inc()
}
