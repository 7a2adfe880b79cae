package gen

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// Differential check against the project's brute-force oracle
// (internal/oracle), written by someone else from the same specification:
// on tiny histories with one injection, the listed transactions are the
// one and only minimal core at every level that forbids the anomaly, and
// the base history alone is valid under strict serializability with and
// without clock skew.
func TestInjectionIsTheOnlyCore(t *testing.T) {
	levels := []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable}
	for _, typ := range InjectTypes() {
		for seed := uint64(0); seed < 8; seed++ {
			cfg := Config{
				Txns: 4, Sessions: 2, Keys: 3, OpsPerTxn: 2, Concurrency: 1,
				ReadRatio: 0.5, BlindWriteRatio: 0.5, DupValueRatio: 0.3, ListRatio: 0.34,
				UnknownRatio: 0.2, AbortRatio: 0.1, Seed: seed, Inject: []string{typ},
			}
			h, inj, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s/seed=%d", typ, seed)
			for _, lvl := range levels {
				opts := history.DefaultOptions()
				opts.Level = lvl
				cores, err := oracle.Cores(h, opts)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var want [][]string
				if typ != StaleRead || lvl.RealTime() {
					want = [][]string{inj[0].Txns}
				}
				if !reflect.DeepEqual(cores, want) {
					t.Errorf("%s under %s: oracle cores %v, want %v", name, lvl, cores, want)
				}
			}
			base := &history.History{}
			for _, tx := range h.Txns {
				if !contains(inj[0].Txns, tx.ID) {
					base.Txns = append(base.Txns, tx)
				}
			}
			for _, skew := range []int64{0, 1_000_000} {
				opts := history.DefaultOptions()
				opts.Level, opts.Skew = history.StrictSerializable, skew
				if ok, _, err := oracle.Check(base, opts); !ok || err != nil {
					t.Errorf("%s: base invalid under strict, skew %d: %v", name, skew, err)
				}
			}
		}
	}
}

// On a full-size history the oracle confirms each listed core (violating
// and subset-minimal under the projection against the whole history).
func TestOracleConfirmsCores(t *testing.T) {
	cfg := preset(t, "mixed")
	cfg.Txns = 1000
	cfg.Inject = InjectTypes()
	h, inj, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inj {
		opts := history.DefaultOptions()
		if in.Type == StaleRead {
			opts.Level = history.StrictSerializable
			opts.Skew = cfg.StaleGap/2 - 1
		}
		if err := oracle.CheckCore(h, opts, in.Txns); err != nil {
			t.Errorf("%s: %v", in.Type, err)
		}
	}
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
