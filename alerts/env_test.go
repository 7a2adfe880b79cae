package alerts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/internal/report"
)

// needBinary returns the path of an external program, skipping the test
// when it is missing, except under CI=true where .ci/run installs it.
func needBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (Debian package %s) is required under CI=true", name, pkg)
		}
		t.Skipf("%s not installed (apt-get install --no-install-recommends %s)", name, pkg)
	}
	return p
}

// freePort returns a loopback port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lostUpdateAlert is a real alert under the given id: the checker's own
// anomaly for a lost update (A and B both read W's x and both overwrite
// it: W[0,100] w x 1 / A[110,200] r x 1, w x 2 / B[120,210] r x 1, w x 3,
// strict-serializable), as incremental.Check and report.New gave it. It is
// kept as JSON rather than recomputed so that these tests do not depend on
// the checker building.
func lostUpdateAlert(t testing.TB, id string) report.Alert {
	t.Helper()
	b, err := os.ReadFile("testdata/lost-update.alert.json")
	if err != nil {
		t.Fatal(err)
	}
	var a report.Alert
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	a.ID = id
	return a
}

// alertmanager is a real Alertmanager on a loopback port with gossip off
// and its storage in a temporary directory.
type alertmanager struct {
	URL  string
	port int
	bin  string
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
	out bytes.Buffer
}

// newAlertmanager prepares an Alertmanager on a free port without
// starting it, so that a test can deliver to it while it is still down.
func newAlertmanager(t *testing.T) *alertmanager {
	t.Helper()
	bin := needBinary(t, "prometheus-alertmanager", "prometheus-alertmanager")
	dir := t.TempDir()
	// One receiver without integrations: the test reads the alerts back
	// through the API, nothing is notified.
	cfg := "route:\n  receiver: sink\nreceivers:\n  - name: sink\n"
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	am := &alertmanager{URL: fmt.Sprintf("http://127.0.0.1:%d", port), port: port, bin: bin, dir: dir}
	t.Cleanup(func() {
		am.stop()
		if t.Failed() {
			am.mu.Lock()
			t.Logf("alertmanager output:\n%s", am.out.String())
			am.mu.Unlock()
		}
	})
	return am
}

// start runs Alertmanager and waits until it answers /-/ready.
func (am *alertmanager) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(am.bin,
		"--config.file="+filepath.Join(am.dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(am.dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", am.port),
		"--cluster.listen-address=",
		"--log.level=warn",
	)
	am.mu.Lock()
	cmd.Stdout, cmd.Stderr = &lockedWriter{&am.mu, &am.out}, &lockedWriter{&am.mu, &am.out}
	am.mu.Unlock()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start alertmanager: %v", err)
	}
	am.mu.Lock()
	am.cmd = cmd
	am.mu.Unlock()
	waitHTTP(t, am.URL+"/-/ready", 20*time.Second)
}

func (am *alertmanager) stop() {
	am.mu.Lock()
	cmd := am.cmd
	am.cmd = nil
	am.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// waitHTTP polls url until it answers 200 or the timeout passes.
func waitHTTP(t testing.TB, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v: %v", url, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
