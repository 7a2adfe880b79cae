package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/state"
)

// broker starts an in-process Kafka-protocol broker with topic seeded.
func broker(t testing.TB, partitions int, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), topics...), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

// stream is a generated history spread over partitions the way producers
// would send it: each event is sent at its end plus a random delay, to a
// random partition, so each partition keeps the lateness promise while
// the partitions interleave arbitrarily.
type stream struct {
	h        *history.History
	inj      []gen.Injected
	parts    [][]history.Txn // per partition, in send order
	merged   []history.Txn   // every event in send order (one partition)
	lateness int64
	opts     history.Options
	// facts, when set, gives each event's database facts (commit_ts,
	// start_ts), which produce then writes with it (run --stamps).
	facts func(*history.Txn) *history.Facts
}

func makeStream(t testing.TB, seed uint64, txns, partitions int, inject ...string) *stream {
	t.Helper()
	return makeStreamOf(t, "mixed", seed, txns, partitions, inject...)
}

// makeStreamOf is makeStream for another gen preset.
func makeStreamOf(t testing.TB, preset string, seed uint64, txns, partitions int, inject ...string) *stream {
	t.Helper()
	if raceEnabled {
		txns = max(txns/3, 100)
	}
	cfg, err := gen.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Seed = txns, seed
	cfg.Inject = inject
	return makeStreamCfg(t, cfg, seed, partitions)
}

// makeStreamCfg is makeStream for a gen configuration (a storm of
// anomalies: InjectRate).
func makeStreamCfg(t testing.TB, cfg gen.Config, seed uint64, partitions int) *stream {
	t.Helper()
	return makeStreamCfgThen(t, cfg, seed, partitions, nil)
}

// makeStreamCfgThen is makeStreamCfg with edit applied to the generated
// history before it is spread over the partitions.
func makeStreamCfgThen(t testing.TB, cfg gen.Config, seed uint64, partitions int, edit func(*history.History)) *stream {
	t.Helper()
	h, inj, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return spreadStream(h, inj, seed, partitions, edit)
}

// spreadStream spreads h over partitions in random arrival order within
// the lateness it sets (edit applied first, if any).
func spreadStream(h *history.History, inj []gen.Injected, seed uint64, partitions int, edit func(*history.History)) *stream {
	if edit != nil {
		edit(h)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	const delay = 2_000_000
	type arrival struct {
		at int64
		p  int
		i  int
	}
	arr := make([]arrival, len(h.Txns))
	var maxDur int64
	for i := range h.Txns {
		tx := &h.Txns[i]
		maxDur = max(maxDur, tx.End-tx.Start)
		arr[i] = arrival{tx.End + rng.Int64N(delay), rng.IntN(partitions), i}
	}
	sort.Slice(arr, func(a, b int) bool { return arr[a].at < arr[b].at })
	s := &stream{h: h, inj: inj, parts: make([][]history.Txn, partitions), lateness: maxDur + delay + 1}
	for _, a := range arr {
		s.parts[a.p] = append(s.parts[a.p], h.Txns[a.i])
		s.merged = append(s.merged, h.Txns[a.i])
	}
	s.opts = history.DefaultOptions()
	s.opts.Level, s.opts.InDoubt, s.opts.InitialState = history.StrictSerializable, 5_000_000, history.InitialEmpty
	return s
}

// produce sends every partition's events to topic in order.
func (s *stream) produce(t testing.TB, addr, topic string) int {
	t.Helper()
	// A minute, and more for a benchmark's millions (1M took 26 s).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+time.Duration(len(s.merged))*100*time.Microsecond)
	defer cancel()
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, topic)
	defer w.Close()
	var ps []int
	var vals [][]byte
	for p, txns := range s.parts {
		for i := range txns {
			ps = append(ps, p)
			if s.facts != nil {
				vals = append(vals, ingest.AppendNativeFacts(nil, &txns[i], s.facts(&txns[i])))
				continue
			}
			vals = append(vals, ingest.AppendNative(nil, &txns[i]))
		}
	}
	if err := w.WritePartitioned(ctx, ps, vals); err != nil {
		t.Fatal(err)
	}
	return len(vals)
}

func (s *stream) args(extra ...string) []string {
	return append([]string{
		"--http=", // the default port is shared with every other run on the machine
		"--lateness", strconv.FormatInt(s.lateness, 10), "--indoubt", "5ms", "--initial-state", "empty",
		"--tick", "1ms", "--status", "0",
	}, extra...)
}

func kafkaArgs(addr, topic string) []string {
	return []string{"--source", "kafka", "--brokers", addr, "--topic", topic, "--stop-at-end"}
}

// benchKafkaArgs are flags the Kafka runs of the benchmarks end with, to
// try fetch shapes or checkpoint settings without a rebuild (later flags
// win).
func benchKafkaArgs() []string {
	return strings.Fields(os.Getenv("STREAMCHECK_BENCH_KAFKA_ARGS"))
}

// alertIDs parses alert lines: the first core under each id, in order.
func alertIDs(t testing.TB, out string) (ids []string, cores map[string][]string) {
	t.Helper()
	cores = map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var a report.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("alert line %q: %v", l, err)
		}
		if _, ok := cores[a.ID]; !ok {
			ids = append(ids, a.ID)
		}
		cores[a.ID] = a.Core
	}
	return ids, cores
}

func runMain(t testing.TB, ctx context.Context, args []string, stdin string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	// No HTTP server unless the test asks for one (a later --http wins).
	code := Main(ctx, append([]string{"--http="}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestKafkaMatchesCheck is issue #7 acceptance 1: a generated history
// with injected anomalies, spread over four partitions in random order
// within the lateness, read from a real Kafka-protocol broker: the verdict
// is check's, every alert core violates on its own and is minimal, every
// injected anomaly is alerted, and the alert ids are exactly those of the
// same events on stdin (one partition) and of a run with tiny fetches.
func TestKafkaMatchesCheck(t *testing.T) {
	s := makeStream(t, 11, 800, 4, "lost-update", "write-skew", "G1c")
	addr := broker(t, 4, "txns")
	s.produce(t, addr, "txns")
	ctx := context.Background()

	code, out, errb := runMain(t, ctx, s.args(append(kafkaArgs(addr, "txns"), "--state-dir", filepath.Join(t.TempDir(), "st"))...), "")
	res, err := incremental.Check(ctx, s.h, s.opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if (code == ExitAnomaly) != (res.Verdict == incremental.Invalid) || code == ExitError {
		t.Fatalf("kafka run exit %d, check says %s\nstderr: %s", code, res.Verdict, errb)
	}
	if strings.Contains(errb, "PARTIAL") {
		t.Fatalf("events dead-lettered within the lateness: %s", errb)
	}
	ids, cores := alertIDs(t, out)
	for _, id := range ids {
		core := cores[id]
		if r := check(t, s.h, s.opts, core); r != incremental.Invalid {
			t.Errorf("alert %s core %v: its projection is %s", id, core, r)
		}
		for j := range core {
			rest := slices.Delete(slices.Clone(core), j, j+1)
			if r := check(t, s.h, s.opts, rest); r != incremental.Valid {
				t.Errorf("alert %s core %v is not minimal: without %s it is %s", id, core, core[j], r)
			}
		}
	}
	for _, in := range s.inj {
		found := false
		for _, c := range cores {
			found = found || isSubsetOf(c, in.Txns)
		}
		if !found {
			t.Errorf("injected %s %v not alerted; alerts %v", in.Type, in.Txns, cores)
		}
	}

	var stdin bytes.Buffer
	for i := range s.merged {
		stdin.Write(ingest.AppendNative(nil, &s.merged[i]))
		stdin.WriteByte('\n')
	}
	code2, out2, errb2 := runMain(t, ctx, s.args(), stdin.String())
	ids2, _ := alertIDs(t, out2)
	if code2 != code || !slices.Equal(ids, ids2) {
		t.Errorf("stdin run: exit %d alerts %v; kafka run: exit %d alerts %v\n%s", code2, ids2, code, ids, errb2)
	}

	code3, out3, _ := runMain(t, ctx, s.args(append(kafkaArgs(addr, "txns"), "--fetch-max-bytes", "300", "--group", "tiny")...), "")
	ids3, _ := alertIDs(t, out3)
	if code3 != code || !slices.Equal(ids, ids3) {
		t.Errorf("tiny fetches: exit %d alerts %v; default fetches: exit %d alerts %v", code3, ids3, code, ids)
	}
}

// TestKafkaRestartsContinue stops a Kafka run at random moments (as
// SIGINT would: checkpoint, exit 0) and restarts it until the topic is
// read; the alert ids and checkpointed totals equal an uninterrupted
// run's (D2). The SIGKILL version is TestCrashHarness.
func TestKafkaRestartsContinue(t *testing.T) {
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprintf("evict=%v", evict), func(t *testing.T) { restartsContinue(t, evict) })
	}
}

func restartsContinue(t *testing.T, evict bool) {
	s := makeStream(t, 12, 600, 3, "lost-update", "write-skew")
	addr := broker(t, 3, "txns")
	n := s.produce(t, addr, "txns")
	dir := t.TempDir()
	ev := fmt.Sprintf("--evict=%v", evict)
	code, out, errb := runMain(t, context.Background(), s.args(append(kafkaArgs(addr, "txns"), ev, "--state-dir", filepath.Join(dir, "a"))...), "")
	if code == ExitError {
		t.Fatal(errb)
	}
	want, _ := alertIDs(t, out)
	wantTotals := totals(t, filepath.Join(dir, "a"))

	rng := rand.New(rand.NewPCG(3, 3))
	var all strings.Builder
	stops := 0
	for {
		// Later stops come later, so that a slow machine (-race) still
		// gets past startup and makes progress.
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(150)+10*stops)*time.Millisecond)
		code, out, errb := runMain(t, ctx, s.args(append(kafkaArgs(addr, "txns"), ev, "--state-dir", filepath.Join(dir, "b"), "--checkpoint-every", "37")...), "")
		cancel()
		all.WriteString(out)
		if code == ExitError {
			t.Fatalf("restart %d: %s", stops, errb)
		}
		if strings.Contains(errb, "end of input") {
			break
		}
		stops++
		if stops > 200 {
			t.Fatal("no progress")
		}
	}
	got, _ := alertIDs(t, all.String())
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after %d stops: alert ids %v, uninterrupted %v", stops, got, want)
	}
	gotTotals := totals(t, filepath.Join(dir, "b"))
	if gotTotals["messages"] != uint64(n) || !sameTotals(gotTotals, wantTotals) {
		t.Errorf("after %d stops: totals %v, uninterrupted %v (%d messages)", stops, gotTotals, wantTotals, n)
	}
	t.Logf("%d stops, %d alerts", stops, len(got))
}

// totals reads the checkpointed counters of a state directory.
func totals(t testing.TB, dir string) map[string]uint64 {
	t.Helper()
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, ok, err := st.Load()
	if err != nil || !ok {
		t.Fatalf("no checkpoint in %s: %v", dir, err)
	}
	return c.Counters
}

// sameTotals compares what must not depend on interruptions: every
// message counted once, accepted, released, closed and dead-lettered
// the same, the same number of alerts. (steps and alert_lines may
// differ: a replay skips alerts already sent.)
func sameTotals(a, b map[string]uint64) bool {
	for _, k := range []string{"messages", "accepted", "released", "closed", "dead_letters", "alerts"} {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// TestKafkaBadInput is issue #7 acceptance 4 for messages: each bad
// message is dead-lettered (file and topic) with its topic, partition,
// offset and reason, counted, the run goes on and says partial, and
// every message is counted once.
func TestKafkaBadInput(t *testing.T) {
	addr := broker(t, 2, "txns")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev := func(id string, start int64) string {
		return fmt.Sprintf(`{"session":"s-%s","id":%q,"start":%d,"end":%d,"status":"committed","ops":[["w","x",%d]]}`, id, id, start, start+10, start)
	}
	type msg struct {
		p      int
		v      string
		reason string
	}
	msgs := []msg{
		{0, ev("a", 1000), ""},
		{0, `{not json`, "undecodable"},
		{0, `{"session":"s","id":"nostatus","start":1100,"end":1200,"ops":[]}`, "invalid"},
		{1, ev("b", 1050), ""},
		// Within one partition: which copy of an id sent to two
		// partitions counts depends on their interleaving.
		{0, ev("a", 1060), "duplicate-id"},
		{0, ev("c", 2000), ""},
		{0, ev("late", 1400), "late"}, // partition 0's watermark is 2000-500
		{1, `{"session":"s","id":"big","start":2100,"end":2110,"status":"committed","ops":[["w","x","` + strings.Repeat("y", 600) + `"]]}`, "oversized"},
		{1, ev("d", 2200), ""},
	}
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, "txns")
	var ps []int
	var vals [][]byte
	for _, m := range msgs {
		ps, vals = append(ps, m.p), append(vals, []byte(m.v))
	}
	if err := w.WritePartitioned(ctx, ps, vals); err != nil {
		t.Fatal(err)
	}
	w.Close()
	dir := t.TempDir()
	dl := filepath.Join(dir, "dead.jsonl")
	code, _, errb := runMain(t, ctx, append(kafkaArgs(addr, "txns"), "--lateness", "500", "--initial-state", "unknown", "--tick", "100",
		"--max-event-bytes", "500", "--dead-letter", dl, "--dead-letter-topic", "dead", "--state-dir", filepath.Join(dir, "st")), "")
	// The undecodable, the invalid and the duplicate are input errors
	// check would reject: exit 2 at the end, after checking the rest.
	if code != ExitError || !strings.Contains(errb, "INPUT ERROR: 3 events") {
		t.Fatalf("exit %d, want %d with 3 input errors: %s", code, ExitError, errb)
	}
	if !strings.Contains(errb, "PARTIAL: 5 events dead-lettered") {
		t.Errorf("summary: %s", errb)
	}
	b, err := os.ReadFile(dl)
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Reason    string `json:"reason"`
		Detail    string `json:"detail"`
		Topic     string `json:"topic"`
		Partition int    `json:"partition"`
		Offset    int64  `json:"offset"`
		Event     string `json:"event"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("dead letter %q: %v", l, err)
		}
		got = append(got, x)
	}
	offsets := map[int]int64{}
	var want []line
	for _, m := range msgs {
		if m.reason != "" {
			want = append(want, line{Reason: m.reason, Topic: "txns", Partition: m.p, Offset: offsets[m.p]})
		}
		offsets[m.p]++
	}
	sortLines := func(ls []line) {
		sort.Slice(ls, func(i, j int) bool {
			return ls[i].Partition < ls[j].Partition || ls[i].Partition == ls[j].Partition && ls[i].Offset < ls[j].Offset
		})
	}
	sortLines(got)
	sortLines(want)
	if len(got) != len(want) {
		t.Fatalf("dead letters %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		if g.Reason != want[i].Reason || g.Topic != "txns" || g.Partition != want[i].Partition || g.Offset != want[i].Offset || g.Detail == "" {
			t.Errorf("dead letter %d: %+v, want %+v", i, g, want[i])
		}
	}
	tot := totals(t, filepath.Join(dir, "st"))
	if tot["messages"] != uint64(len(msgs)) || tot["accepted"]+tot["dead_letters"] != tot["messages"] || tot["dead_letters"] != 5 {
		t.Errorf("totals %v", tot)
	}
	// After the last durable checkpoint its offsets went to the consumer
	// group, where lag tools read them.
	cl := &kafka.Client{Addr: kafka.TCP(addr)}
	resp, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "streamcheck", Topics: map[string][]int{"txns": {0, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics["txns"] {
		if p.CommittedOffset != offsets[p.Partition] {
			t.Errorf("group offset of partition %d: %d, want %d", p.Partition, p.CommittedOffset, offsets[p.Partition])
		}
	}
	// The topic copy carries the same lines.
	dcfg := ingest.KafkaConfig{Brokers: []string{addr}, Topic: "dead", MaxWait: 50 * time.Millisecond,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}
	np, err := ingest.KafkaPartitions(ctx, &dcfg)
	if err != nil {
		t.Fatal(err)
	}
	r := ingest.NewKafkaSource(ctx, dcfg, slices.Repeat([]int64{-2}, np))
	defer r.Close()
	var topicLines []line
	for len(topicLines) < 5 {
		select {
		case m := <-r.Messages():
			var x line
			if err := json.Unmarshal(m.Value, &x); err != nil {
				t.Fatal(err)
			}
			topicLines = append(topicLines, x)
		case <-ctx.Done():
			t.Fatalf("dead-letter topic: %d of 5 lines", len(topicLines))
		}
	}
	sortLines(topicLines)
	for i := range want {
		if topicLines[i].Reason != want[i].Reason || topicLines[i].Offset != want[i].Offset {
			t.Errorf("topic dead letter %d: %+v", i, topicLines[i])
		}
	}
}

// TestStateRefusals: a state directory of a newer format, one in use by
// another run, and a config with an unknown key each stop the run with a
// clear message (exit 2).
func TestStateRefusals(t *testing.T) {
	addr := broker(t, 1, "txns")
	dir := filepath.Join(t.TempDir(), "st")
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.SetFormatForTest(state.FormatVersion + 1)
	st.Close()
	code, _, errb := runMain(t, context.Background(), append(kafkaArgs(addr, "txns"), "--state-dir", dir), "")
	if code != ExitError || !strings.Contains(errb, fmt.Sprintf("format version %d", state.FormatVersion+1)) || !strings.Contains(errb, "newer") {
		t.Errorf("newer format: exit %d: %s", code, errb)
	}

	dir2 := filepath.Join(t.TempDir(), "st")
	ctx, cancel := context.WithCancel(context.Background())
	first := &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"--http=", "--source", "kafka", "--brokers", addr, "--topic", "txns", "--state-dir", dir2, "--status", "0"}, nil, io.Discard, first)
	}()
	for !strings.Contains(first.String(), "state directory open") {
		time.Sleep(10 * time.Millisecond)
	}
	code, _, errb = runMain(t, context.Background(), []string{"--source", "kafka", "--brokers", addr, "--topic", "txns", "--state-dir", dir2}, "")
	if code != ExitError || !strings.Contains(errb, "in use by another process") {
		t.Errorf("second run on one state directory: exit %d: %s", code, errb)
	}
	cancel()
	if c := <-done; c != ExitOK {
		t.Errorf("interrupted run exit %d, want 0: %s", c, first.String())
	}

	cfg := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(cfg, []byte("source: kafka\nkafka:\n  topic: txns\n  brokerz: [x]\n"), 0o644)
	code, _, errb = runMain(t, context.Background(), []string{"--config", cfg}, "")
	if code != ExitError || !strings.Contains(errb, "brokerz") || !strings.Contains(errb, "line 4") {
		t.Errorf("unknown key: exit %d: %s", code, errb)
	}
}

// TestConfigFlagsOverride: flags win over the file, the file over the
// defaults.
func TestConfigFlagsOverride(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(cfg, []byte("check:\n  lateness: 7s\n  skew: 1ms\nsource: kafka\nkafka:\n  topic: a\n"), 0o644)
	var errb bytes.Buffer
	rc, err := parse([]string{"--config", cfg, "--skew", "2ms", "--topic", "b"}, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Check.Lateness != 7e9 || rc.opts.Skew != 2e6 || rc.Kafka.Topic != "b" || rc.Kafka.Group != "streamcheck" {
		t.Fatalf("lateness %d skew %d topic %s group %s", rc.Check.Lateness, rc.opts.Skew, rc.Kafka.Topic, rc.Kafka.Group)
	}
}

// TestKcat is issue #7 acceptance 2: events produced by kcat (librdkafka,
// a client nobody here wrote) into the in-process broker are consumed and
// checked: the stale read among them is alerted.
func TestKcat(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kcat is missing (apt-get install kcat); CI must run this test")
		}
		t.Skip("kcat not installed (Debian package kcat); skipping")
	}
	s := makeStream(t, 13, 300, 2, "lost-update")
	addr := broker(t, 2, "txns")
	for p, txns := range s.parts {
		var in bytes.Buffer
		for i := range txns {
			in.Write(ingest.AppendNative(nil, &txns[i]))
			in.WriteByte('\n')
		}
		cmd := exec.Command(kcat, "-P", "-b", addr, "-t", "txns", "-p", strconv.Itoa(p))
		cmd.Stdin = &in
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kcat: %v\n%s", err, out)
		}
	}
	code, out, errb := runMain(t, context.Background(), s.args(kafkaArgs(addr, "txns")...), "")
	res, err := incremental.Check(context.Background(), s.h, s.opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if code != ExitAnomaly || res.Verdict != incremental.Invalid {
		t.Fatalf("exit %d, check %s: %s", code, res.Verdict, errb)
	}
	if !strings.Contains(errb, fmt.Sprintf("%d transactions checked", len(s.h.Txns))) {
		t.Errorf("not every event was read: %s", errb)
	}
	_, cores := alertIDs(t, out)
	for _, in := range s.inj {
		found := false
		for _, c := range cores {
			found = found || isSubsetOf(c, in.Txns)
		}
		if !found {
			t.Errorf("injected %s %v not alerted", in.Type, in.Txns)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
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

// TestBrokerOutage: the broker goes away in the middle of a run and comes
// back on the same address with its data; the run says so in its log and
// status line, retries, and resumes without loss (every message counted
// once, the same alerts as a run without the outage).
func TestBrokerOutage(t *testing.T) {
	s := makeStream(t, 14, 600, 2, "lost-update")
	data := t.TempDir()
	start := func(port int) *kfake.Cluster {
		opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DataDir(data), kfake.SyncWrites(), kfake.AllowAutoTopicCreation()}
		if port == 0 {
			opts = append(opts, kfake.SeedTopics(2, "txns"))
		} else {
			opts = append(opts, kfake.Ports(port))
		}
		c, err := kfake.NewCluster(opts...)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := start(0)
	addr := c.ListenAddrs()[0]
	_, portText, _ := strings.Cut(addr[strings.LastIndex(addr, ":"):], ":")
	port, _ := strconv.Atoi(portText)
	half := &stream{parts: make([][]history.Txn, 2)}
	rest := &stream{parts: make([][]history.Txn, 2)}
	for p, txns := range s.parts {
		half.parts[p], rest.parts[p] = txns[:len(txns)/2], txns[len(txns)/2:]
	}
	n := half.produce(t, addr, "txns")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	var out bytes.Buffer
	done := make(chan int)
	dir := t.TempDir()
	go func() {
		done <- Main(ctx, s.args("--source", "kafka", "--brokers", addr, "--topic", "txns", "--state-dir", filepath.Join(dir, "st"),
			"--status", "20ms", "--checkpoint-interval", "50ms"), nil, &out, logs)
	}()
	waitFor := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(logs.String(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log:\n%s", what, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(fmt.Sprintf("run: %d messages;", n))
	c.Close()
	waitFor("BROKER UNREACHABLE")
	c = start(port)
	defer c.Close()
	n += rest.produce(t, addr, "txns")
	waitFor(fmt.Sprintf("run: %d messages;", n))
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, logs.String())
	}
	if tot := totals(t, filepath.Join(dir, "st")); tot["messages"] != uint64(n) || tot["accepted"] != uint64(n) {
		t.Errorf("totals %v, want %d messages all accepted", tot, n)
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("the outage is not in the log:\n%s", logs.String())
	}
}

// TestKafkaRunLeaksNoGoroutines: after a Kafka run returns, its readers,
// connection pools and writers are gone (a days-long process restarts
// sources after errors; what leaks once per run leaks for ever there).
func TestKafkaRunLeaksNoGoroutines(t *testing.T) {
	s := makeStream(t, 15, 200, 3)
	addr := broker(t, 3, "txns")
	s.produce(t, addr, "txns")
	// os/signal's loop starts with the first Notify and never ends; it
	// is not the run's.
	_, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	stop()
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	code, _, errb := runMain(t, context.Background(), s.args(append(kafkaArgs(addr, "txns"), "--state-dir", filepath.Join(t.TempDir(), "st"), "--dead-letter-topic", "dead")...), "")
	if code == ExitError {
		t.Fatal(errb)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines before the run, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestRetentionLoss: events the topic's retention deleted while the
// checker was down are counted as lost, the run resumes at the log start,
// and the verdict says it is partial.
func TestRetentionLoss(t *testing.T) {
	addr := broker(t, 1, "txns")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, "txns")
	defer w.Close()
	send := func(from, to int) {
		var vals [][]byte
		for i := from; i < to; i++ {
			vals = append(vals, fmt.Appendf(nil, `{"session":"s","id":"t%d","start":%d,"end":%d,"status":"committed","ops":[["w","x",%d]]}`, i, 100*i, 100*i+10, i))
		}
		if err := w.Write(ctx, nil, vals); err != nil {
			t.Fatal(err)
		}
	}
	send(0, 10)
	dir := filepath.Join(t.TempDir(), "st")
	args := append(kafkaArgs(addr, "txns"), "--state-dir", dir, "--lateness", "50", "--tick", "100", "--status", "0")
	if code, _, errb := runMain(t, ctx, args, ""); code == ExitError {
		t.Fatal(errb)
	}
	send(10, 20)
	// Retention deletes offsets 10..14 before the checker comes back.
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "txns"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 15
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("delete records: %v %+v", err, resp)
	}
	code, _, errb := runMain(t, ctx, args, "")
	if code == ExitError {
		t.Fatal(errb)
	}
	if !strings.Contains(errb, "5 Kafka offsets lost to retention") || !strings.Contains(errb, "events lost to the topic's retention") {
		t.Errorf("loss not reported:\n%s", errb)
	}
	if tot := totals(t, dir); tot["messages"] != 15 || tot["lost"] != 5 {
		t.Errorf("totals %v, want 15 messages read and 5 lost", tot)
	}
}

// TestIdlePartition: a partition nobody produces to stops holding the
// watermark back after idle_timeout of event time, so a stale read in the
// other partition is alerted while the run goes on; the log names the
// idle partition.
func TestIdlePartition(t *testing.T) {
	addr := broker(t, 2, "txns")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, "txns")
	defer w.Close()
	if err := w.WritePartitioned(ctx, []int{0, 0, 0}, [][]byte{
		[]byte(`{"id":"W","start":0,"end":10,"status":"committed","ops":[["w","x",1]]}`),
		[]byte(`{"id":"R","start":20,"end":30,"status":"committed","ops":[["r","x",null]]}`),
		[]byte(`{"id":"Z","start":2000,"end":2010,"status":"committed","ops":[]}`),
	}); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	out, logs := &syncBuffer{}, &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- Main(runCtx, []string{"--http=", "--source", "kafka", "--brokers", addr, "--topic", "txns", "--lateness", "5",
			"--idle-timeout", "100", "--tick", "1", "--initial-state", "empty", "--status", "20ms"}, nil, out, logs)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !(strings.Contains(out.String(), `"R"`) && strings.Contains(logs.String(), "partition idle")) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
	if !strings.Contains(out.String(), `"core":["R","W"]`) && !strings.Contains(out.String(), `"core":["W","R"]`) {
		t.Errorf("no alert on the stale read while partition 1 is empty:\nalerts: %s\nlog: %s", out.String(), logs.String())
	}
	if !strings.Contains(logs.String(), "partition idle") || !strings.Contains(logs.String(), "partition=1") {
		t.Errorf("the idle partition is not logged:\n%s", logs.String())
	}
}

// TestDuplicateIDAcrossRestarts: the window's IDs are checkpointed apart,
// each checkpoint adding those seen since the last; a restart must still
// know every one of them, those of the first run (restored from the
// state) and those of the second (stored after a restore), so a reused id
// is dead-lettered as a duplicate however many restarts lie between.
func TestDuplicateIDAcrossRestarts(t *testing.T) {
	addr := broker(t, 1, "txns")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ev := func(id string, start int64) []byte {
		return fmt.Appendf(nil, `{"session":"s-%s","id":%q,"start":%d,"end":%d,"status":"committed","ops":[["w","x%s",%d]]}`, id, id, start, start+10, id, start)
	}
	dir := t.TempDir()
	dl := filepath.Join(dir, "dead.jsonl")
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, "txns")
	defer w.Close()
	// Repeats within the lateness (50) of the first start, and not late:
	// IDs are remembered while their start is within the lateness of W.
	runs := [][][]byte{
		{ev("a", 1000), ev("b", 1010)},
		{ev("a", 1000), ev("c", 1020)}, // a: seen by the first run
		{ev("c", 1020), ev("b", 1030), ev("d", 1100)},
	}
	for i, msgs := range runs {
		if err := w.WritePartitioned(ctx, make([]int, len(msgs)), msgs); err != nil {
			t.Fatal(err)
		}
		code, _, errb := runMain(t, ctx, append(kafkaArgs(addr, "txns"), "--lateness", "50", "--tick", "10",
			"--dead-letter", dl, "--state-dir", filepath.Join(dir, "st"), "--checkpoint-every", "1"), "")
		// From the second run on, the stream holds a duplicate id, an
		// input error (exit 2 at the end), restored with the counters.
		want := ExitOK
		if i > 0 {
			want = ExitError
		}
		if code != want || (i > 0 && !strings.Contains(errb, "INPUT ERROR")) {
			t.Fatalf("run %d: exit %d, want %d: %s", i+1, code, want, errb)
		}
	}
	b, err := os.ReadFile(dl)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x struct {
			Reason string `json:"reason"`
			Offset int64  `json:"offset"`
		}
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("dead letter %q: %v", l, err)
		}
		got = append(got, fmt.Sprint(x.Offset, " ", x.Reason))
	}
	want := []string{"2 duplicate-id", "4 duplicate-id", "5 duplicate-id"}
	if !slices.Equal(got, want) {
		t.Fatalf("dead letters %v, want %v", got, want)
	}
}
