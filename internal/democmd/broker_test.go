package democmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/gencmd"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/internal/runcmd"
)

// syncBuffer is a bytes.Buffer that the command under test writes from
// its goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls until cond holds or d passes.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// --broker-only end to end, as a user tries run's Kafka source: the demo
// serves its broker, kcat produces a generated history into a topic that
// does not exist yet (created on first use), and run --source kafka
// alerts exactly the injected anomalies, each with the manifest's core
// and class.
func TestBrokerOnlyKcatToRun(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kcat is required under CI=true")
		}
		t.Skip("kcat not installed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var brokerErr syncBuffer
	brokerDone := make(chan int, 1)
	go func() {
		brokerDone <- Main(ctx, []string{"--broker-only", "127.0.0.1:0", "--duration", "2m"}, nil, &bytes.Buffer{}, &brokerErr)
	}()
	addrRe := regexp.MustCompile(`serving a Kafka-protocol broker on (127\.0\.0\.1:\d+) `)
	var addr string
	if !waitFor(10*time.Second, func() bool {
		m := addrRe.FindStringSubmatch(brokerErr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("no broker address on stderr: %q", brokerErr.String())
	}

	var events, manifestOut bytes.Buffer
	if code := gencmd.Main([]string{"--txns", "2000", "--seed", "4", "--inject", "lost-update,G-single,write-skew"}, &events, &manifestOut); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, manifestOut.String())
	}
	var manifest []gen.Injected
	if err := json.Unmarshal(manifestOut.Bytes(), &manifest); err != nil || len(manifest) != 3 {
		t.Fatalf("manifest %s: %v", manifestOut.String(), err)
	}

	const topic = "mine" // not seeded: kcat's producer creates it
	cmd := exec.Command(kcat, "-P", "-b", addr, "-t", topic)
	cmd.Stdin = &events
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v: %s", err, out)
	}

	runCtx, stopRun := context.WithTimeout(ctx, 60*time.Second)
	defer stopRun()
	var runOut, runErr syncBuffer
	runStart := time.Now()
	runDone := make(chan int, 1)
	go func() {
		runDone <- runcmd.Main(runCtx, []string{"--source", "kafka", "--brokers", addr, "--topic", topic,
			"--initial-state", "empty", "--lateness", "10ms", "--tick", "10ms", "--status", "0", "--http", ""}, nil, &runOut, &runErr)
	}()
	// The last injection is alerted once the watermark passes it; the
	// stream's own tail never closes, so run is stopped after that.
	waitFor(50*time.Second, func() bool { return strings.Count(runOut.String(), "\n") >= len(manifest) })
	t.Logf("%d alert lines after %s", strings.Count(runOut.String(), "\n"), time.Since(runStart))
	time.Sleep(500 * time.Millisecond) // an extra (false) alert would show here
	stopRun()
	if code := <-runDone; code != runcmd.ExitAnomaly {
		t.Errorf("run: exit %d\n%s", code, runErr.String())
	}

	type got struct{ core, class string }
	var alerts []got
	for _, line := range strings.Split(strings.TrimSpace(runOut.String()), "\n") {
		if line == "" {
			continue
		}
		var a report.Anomaly
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("alert line %q: %v", line, err)
		}
		alerts = append(alerts, got{strings.Join(sortedCopy(a.Core), ","), a.Class})
	}
	var want []got
	for _, in := range manifest {
		want = append(want, got{strings.Join(sortedCopy(in.Txns), ","), in.Class})
	}
	slices.SortFunc(alerts, func(a, b got) int { return strings.Compare(a.core, b.core) })
	slices.SortFunc(want, func(a, b got) int { return strings.Compare(a.core, b.core) })
	if !slices.Equal(alerts, want) {
		t.Errorf("run's alerts (core, class) %v, want the injections %v\nrun stderr:\n%s", alerts, want, runErr.String())
	}

	cancel()
	if code := <-brokerDone; code != ExitOK {
		t.Errorf("broker: exit %d: %s", code, brokerErr.String())
	}
	if !strings.Contains(brokerErr.String(), "broker stopped") {
		t.Errorf("broker stderr: %q", brokerErr.String())
	}
}

func TestBrokerOnlyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--broker-only", "0.0.0.0:9092"}, "not a loopback address"},
		{[]string{"--broker-only", "example.com:9092"}, "not a loopback address"},
		{[]string{"--broker-only", "9092"}, `--broker-only "9092"`},
		{[]string{"--broker-only", "127.0.0.1:0", "--rate", "10", "--record", "x"}, "--rate, --record not used"},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), tc.args, nil, &stdout, &stderr); code != ExitError {
			t.Errorf("%v: exit %d, want %d", tc.args, code, ExitError)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
}
